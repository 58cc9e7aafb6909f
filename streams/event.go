package streams

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// EventFlag is a cudaEventCreateWithFlags flag.
type EventFlag uint32

// Event flags.
const (
	BlockingSync  = EventFlag(backend.EventBlockingSync)  // a host wait blocks the thread instead of spinning (gpuactor never waits on events that way)
	DisableTiming = EventFlag(backend.EventDisableTiming) // cheaper to record; Elapsed refuses it
	Interprocess  = EventFlag(backend.EventInterprocess)  // shareable between processes (with DisableTiming)
)

// Event is a CUDA event of one device: a point in a stream that other streams, of this device
// or others, can wait for, and that can be timed.
type Event core.Event

func (e *Event) core() *core.Event { return (*core.Event)(e) }

// NewEvent creates an event on dev; it returns once the event exists. Close it with Close, or
// let the device's Close destroy it.
func NewEvent(ctx context.Context, dev *device.Device, flags ...EventFlag) (*Event, error) {
	if dev == nil {
		return nil, core.Invalid("NewEvent on a nil device")
	}
	var f EventFlag
	for _, fl := range flags {
		f |= fl
	}
	if f&Interprocess != 0 && f&DisableTiming == 0 {
		return nil, core.Invalid("an Interprocess event needs DisableTiming too")
	}
	e, err := core.NewEvent(ctx, (*core.Device)(dev), uint32(f))
	if err != nil {
		return nil, fmt.Errorf("gpuactor/streams: creating an event: %w", err)
	}
	return (*Event)(e), nil
}

// Device is the device the event belongs to.
func (e *Event) Device() *device.Device { return (*device.Device)(e.core().Device()) }

// Record records the event on s; see Stream.Record.
func (e *Event) Record(ctx context.Context, s *Stream) *Future {
	if e == nil {
		return failed(core.Invalid("Record of a nil event"))
	}
	return s.Record(ctx, e)
}

// Query reports whether the event's most recent record has completed (true for an event never
// recorded, as in CUDA); it returns once the device's actor has asked the runtime.
func (e *Event) Query(ctx context.Context) (bool, error) {
	if e == nil {
		return false, core.Invalid("Query of a nil event")
	}
	ce := e.core()
	return core.Run(ctx, ce.Device(), func(rt backend.Device, _ *core.Tracker) (bool, error) {
		h, err := ce.Handle()
		if err != nil {
			return false, err
		}
		err = rt.EventQuery(h)
		if errors.Is(err, cudaerr.NotReady) {
			return false, nil
		}
		return err == nil, err
	}).Await(ctx)
}

// Synchronize waits until the event's most recent record has completed, without holding up
// the device's other work.
func (e *Event) Synchronize(ctx context.Context) error {
	if e == nil {
		return core.Invalid("Synchronize of a nil event")
	}
	ce := e.core()
	return core.RunTracked(ctx, ce.Device(), func(_ backend.Device, tr *core.Tracker, done func(error)) error {
		h, err := ce.Handle()
		if err != nil {
			return err
		}
		tr.AfterEvent(h, done)
		return nil
	}).Wait(ctx)
}

// Elapsed is the GPU time between the completed records of start and end (both of one device,
// neither created with DisableTiming); it returns once the device's actor has asked.
func Elapsed(ctx context.Context, start, end *Event) (time.Duration, error) {
	if start == nil || end == nil {
		return 0, core.Invalid("Elapsed of a nil event")
	}
	s, e := start.core(), end.core()
	if s.Device() != e.Device() {
		return 0, core.WrongDevice("end event", e.Device(), s.Device())
	}
	if EventFlag(s.Flags()|e.Flags())&DisableTiming != 0 {
		return 0, core.Invalid("Elapsed of an event created with DisableTiming")
	}
	ms, err := core.Run(ctx, s.Device(), func(rt backend.Device, _ *core.Tracker) (float32, error) {
		sh, err := s.Handle()
		if err != nil {
			return 0, err
		}
		eh, err := e.Handle()
		if err != nil {
			return 0, err
		}
		return rt.EventElapsed(sh, eh)
	}).Await(ctx)
	return time.Duration(float64(ms) * float64(time.Millisecond)), err
}

// Close destroys the event and returns once it is destroyed. Work already queued that records
// or waits on it is unaffected. Closing twice is an ErrClosed error.
func (e *Event) Close(ctx context.Context) error { return e.core().Close(ctx) }
