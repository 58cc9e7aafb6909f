package interop

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// SemaphoreKind is the kind of semaphore a file descriptor carries.
type SemaphoreKind int

// Semaphore kinds.
const (
	// BinarySemaphore is a binary semaphore exported as an opaque file descriptor (Vulkan's
	// VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT on a binary VkSemaphore): Signal and
	// Wait ignore their value.
	BinarySemaphore SemaphoreKind = iota + 1
	// TimelineSemaphore is a timeline semaphore exported as an opaque file descriptor (a
	// VkSemaphore of VK_SEMAPHORE_TYPE_TIMELINE): Signal sets its counter to a value, Wait
	// waits until the counter reaches one.
	TimelineSemaphore
)

func (k SemaphoreKind) String() string {
	switch k {
	case BinarySemaphore:
		return "binary"
	case TimelineSemaphore:
		return "timeline"
	}
	return fmt.Sprintf("SemaphoreKind(%d)", int(k))
}

func (k SemaphoreKind) backend() (backend.ExternalSemaphoreKind, bool) {
	switch k {
	case BinarySemaphore:
		return backend.SemaphoreOpaqueFD, true
	case TimelineSemaphore:
		return backend.SemaphoreTimelineFD, true
	}
	return 0, false
}

// ExternalSemaphore is a semaphore another API exported and ImportSemaphore imported into a
// device: streams of the device signal it and wait for it, ordering their work with the other
// API's. Its methods are safe for concurrent use.
type ExternalSemaphore struct {
	dev    *core.Device
	h      backend.ExternalSemaphore
	kind   SemaphoreKind
	closed atomic.Bool // set on the actor thread
}

// ImportSemaphore imports a semaphore of kind exported as a POSIX file descriptor into dev; it
// returns once the runtime has imported it. fd stays the caller's: the runtime takes
// ownership of the descriptor it imports, so ImportSemaphore gives it a duplicate. A closed or
// invalid fd, or an unknown kind, is an ErrInvalidArgument error; the simulator's refusal an
// ErrExternalNotSupported error. Close it with Close, or let dev's Close destroy it.
func ImportSemaphore(ctx context.Context, dev *device.Device, fd int, kind SemaphoreKind) (*ExternalSemaphore, error) {
	if dev == nil {
		return nil, core.Invalid("ImportSemaphore on a nil device")
	}
	bk, ok := kind.backend()
	if !ok {
		return nil, core.Invalid("ImportSemaphore of unknown %v", kind)
	}
	dup, err := dupFD("ImportSemaphore", fd)
	if err != nil {
		return nil, err
	}
	claim := &fdClaim{fd: dup}
	defer claim.abandon()
	cd := (*core.Device)(dev)
	return core.Make(ctx, cd, func(rt backend.Device, tr *core.Tracker) (*ExternalSemaphore, error) {
		if !claim.take() {
			return nil, context.Canceled
		}
		h, err := rt.ImportExternalSemaphoreFD(dup, bk)
		if err != nil {
			closeFD(dup)
			return nil, externalError("ImportSemaphore", err)
		}
		s := &ExternalSemaphore{dev: cd, h: h, kind: kind}
		tr.Own(s, func() error { return s.destroy(rt) })
		cd.Semaphores().Add(s, h)
		return s, nil
	}, func(rt backend.Device, tr *core.Tracker, s *ExternalSemaphore) {
		tr.Disown(s)
		_ = s.destroy(rt)
	})
}

// Kind is the semaphore's kind.
func (e *ExternalSemaphore) Kind() SemaphoreKind { return e.kind }

// Device is the device the semaphore is imported into (nil for a nil semaphore).
func (e *ExternalSemaphore) Device() *device.Device {
	if e == nil {
		return nil
	}
	return (*device.Device)(e.dev)
}

// Signal queues a signal of the semaphore on s, a stream of its device: once the GPU has done
// the work queued on s before it, a timeline semaphore's counter becomes value (which must
// grow from signal to signal) and a binary semaphore is signalled (value ignored). The future
// completes when the GPU has done the signal, tracked like any stream operation. A stream of
// another device is an ErrWrongDevice error; a closed semaphore or stream, ErrClosed.
func (e *ExternalSemaphore) Signal(ctx context.Context, s *streams.Stream, value uint64) *streams.Future {
	return e.queue(ctx, "Signal", s, func(rt backend.Device, h backend.Stream) error {
		return externalError("Signal", rt.SignalExternalSemaphore(e.h, value, h))
	})
}

// Wait makes s, a stream of the semaphore's device, wait until the semaphore is signalled
// (a timeline semaphore: until its counter reaches value; a binary one: until the other API's
// next signal, which the wait consumes): work queued on s after Wait runs after that. The
// future completes when the GPU has passed the wait, that is once the other API has
// signalled. Errors as Signal's.
func (e *ExternalSemaphore) Wait(ctx context.Context, s *streams.Stream, value uint64) *streams.Future {
	return e.queue(ctx, "Wait", s, func(rt backend.Device, h backend.Stream) error {
		return externalError("Wait", rt.WaitExternalSemaphore(e.h, value, h))
	})
}

// queue sends op to run on s, checking the semaphore on the actor thread.
func (e *ExternalSemaphore) queue(ctx context.Context, what string, s *streams.Stream, op func(rt backend.Device, h backend.Stream) error) *streams.Future {
	if e == nil {
		return actor.Completed(struct{}{}, core.Invalid("%s of a nil external semaphore", what))
	}
	if s == nil {
		return actor.Completed(struct{}{}, core.Invalid("%s on a nil stream", what))
	}
	cs := (*core.Stream)(s)
	if cs.Device() != e.dev {
		return actor.Completed(struct{}{}, core.WrongDevice("stream", cs.Device(), e.dev))
	}
	return core.Queue(ctx, cs, func(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
		if e.closed.Load() {
			return core.Closed("%s of an external semaphore after its Close", what)
		}
		return op(rt, h)
	})
}

// Close destroys the semaphore once the GPU has passed the work queued so far on every stream
// of its device (so signals and waits already queued still happen), and returns once it is
// destroyed. Closing twice is an ErrClosed error.
func (e *ExternalSemaphore) Close(ctx context.Context) error {
	if e == nil {
		return core.Invalid("Close of a nil external semaphore")
	}
	return core.RunTracked(ctx, e.dev, func(rt backend.Device, tr *core.Tracker, done func(error)) error {
		if e.closed.Load() {
			return core.Closed("external semaphore closed twice")
		}
		e.closed.Store(true)
		e.dev.Semaphores().Drop(e)
		tr.Disown(e)
		tr.AfterAll(func(err error) { done(errors.Join(err, e.destroy(rt))) })
		return nil
	}).Wait(ctx)
}

// destroy destroys the semaphore; actor thread only.
func (e *ExternalSemaphore) destroy(rt backend.Device) error {
	e.closed.Store(true)
	e.dev.Semaphores().Drop(e)
	return externalError("destroying an external semaphore", rt.DestroyExternalSemaphore(e.h))
}
