package core

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/spin"
)

// Event is a CUDA event of one device: the state streams.Event is a face over.
type Event struct {
	dev     *Device
	h       backend.Event
	flags   uint32
	foreign bool // another library's event (WrapEvent): Close forgets it
	closed  atomic.Bool

	// Records sent (issued) and executed by the device's actor (recorded), and the latest
	// record's future: a Wait on another device uses them to run after the record it follows.
	issued   atomic.Uint64
	recorded atomic.Uint64
	last     atomic.Pointer[Future]
}

// NewEvent creates an event on d with cudaEventCreateWithFlags flags.
func NewEvent(ctx context.Context, d *Device, flags uint32) (*Event, error) {
	return makeEvent(ctx, d, flags, false, func(rt backend.Device) (backend.Event, error) { return rt.EventCreate(flags) })
}

// makeEvent makes an Event of d over the handle open gives on the actor thread, owned by the
// device's tracker, so that the device's Close ends it; a foreign one (another library's) is
// forgotten then, any other destroyed.
func makeEvent(ctx context.Context, d *Device, flags uint32, foreign bool, open func(rt backend.Device) (backend.Event, error)) (*Event, error) {
	return Make(ctx, d, func(rt backend.Device, tr *Tracker) (*Event, error) {
		h, err := open(rt)
		if err != nil {
			return nil, err
		}
		e := &Event{dev: d, h: h, flags: flags, foreign: foreign}
		tr.Own(e, func() error { return e.destroy(rt) })
		return e, nil
	}, func(rt backend.Device, tr *Tracker, e *Event) {
		tr.Disown(e)
		_ = e.destroy(rt)
	})
}

// Device is the event's device (nil for a nil event).
func (e *Event) Device() *Device {
	if e == nil {
		return nil
	}
	return e.dev
}

// Flags are the flags the event was made with (0 for a nil event).
func (e *Event) Flags() uint32 {
	if e == nil {
		return 0
	}
	return e.flags
}

// Handle is the event's handle, refusing a closed one; on the actor thread.
func (e *Event) Handle() (backend.Event, error) {
	if err := e.alive(); err != nil {
		return 0, err
	}
	return e.h, nil
}

// Record queues a record of e on s; the future completes when the GPU reaches it.
func (e *Event) Record(ctx context.Context, s *Stream) *Future {
	n := e.issued.Add(1)
	f := Queue(ctx, s, func(rt backend.Device, _ *Tracker, h backend.Stream) error {
		defer e.noteRecorded(n)
		if err := e.alive(); err != nil {
			return err
		}
		return rt.EventRecord(e.h, h)
	})
	e.last.Store(f)
	return f
}

// AwaitRecorded waits until e's device has executed every record issued so far (or the latest
// one has failed): operations sent to two devices' actors are not ordered, and a Wait that ran
// before its Record would wait for nothing. It runs on the caller's goroutine, never on an
// actor, so it cannot hold up the device it waits for.
//
// It polls with yields for its first rounds, with a token of the process's spin budget, and
// sleeps between polls after them, or from the start without a token.
func (e *Event) AwaitRecorded(ctx context.Context) error {
	want := e.issued.Load()
	if e.recorded.Load() >= want {
		return nil
	}
	token := spin.Acquire()
	defer func() {
		if token {
			spin.Release()
		}
	}()
	for i := 0; e.recorded.Load() < want; i++ {
		if f := e.last.Load(); f != nil && f.Ready() {
			return nil // the record failed (the Wait then waits on the previous one) or already ran
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if token && i < 1000 {
			runtime.Gosched()
			continue
		}
		if token {
			spin.Release()
			token = false
		}
		time.Sleep(10 * time.Microsecond)
	}
	return nil
}

// noteRecorded runs on the actor thread once record n has been issued to the runtime.
func (e *Event) noteRecorded(n uint64) {
	for {
		cur := e.recorded.Load()
		if cur >= n || e.recorded.CompareAndSwap(cur, n) {
			return
		}
	}
}

// Close destroys the event. Work already queued that records or waits on it is unaffected.
// Closing twice is an ErrClosed error.
func (e *Event) Close(ctx context.Context) error {
	if e == nil {
		return Invalid("Close of a nil event")
	}
	return Do(ctx, e.dev, func(rt backend.Device, tr *Tracker) error {
		if e.closed.Load() {
			return Closed("event closed twice")
		}
		tr.Disown(e)
		return e.destroy(rt)
	})
}

func (e *Event) destroy(rt backend.Device) error {
	e.closed.Store(true)
	if e.foreign {
		return nil // the other library's to destroy
	}
	return rt.EventDestroy(e.h)
}

// Alive is nil while e may be used, and an ErrClosed error once it was closed.
func (e *Event) Alive() error { return e.alive() }

func (e *Event) alive() error {
	if e.closed.Load() {
		return Closed("event used after Close")
	}
	return nil
}

// OpenEvent makes an Event of d from a handle open makes on the actor thread (an event another
// process shared, say), with the flags it behaves as; Close, or the device's Close, destroys
// it with EventDestroy like any other.
func OpenEvent(ctx context.Context, d *Device, flags uint32, open func(rt backend.Device) (backend.Event, error)) (*Event, error) {
	return makeEvent(ctx, d, flags, false, open)
}
