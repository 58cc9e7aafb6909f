package streams

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
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
type Event struct {
	dev       *device.Device
	h         backend.Event
	flags     EventFlag
	destroyed atomic.Bool

	// Records sent (issued) and executed by the device's actor (recorded), and the latest
	// record's future: a Wait on another device uses them to run after the record it follows.
	issued   atomic.Uint64
	recorded atomic.Uint64
	last     atomic.Pointer[Future]
}

// NewEvent creates an event on dev.
func NewEvent(ctx context.Context, dev *device.Device, flags ...EventFlag) (*Event, error) {
	if dev == nil {
		return nil, invalid("NewEvent on a nil device")
	}
	var f EventFlag
	for _, fl := range flags {
		f |= fl
	}
	if f&Interprocess != 0 && f&DisableTiming == 0 {
		return nil, invalid("an Interprocess event needs DisableTiming too")
	}
	return device.Exec(ctx, dev, func(rt backend.Device, tr *device.Tracker) (*Event, error) {
		h, err := rt.EventCreate(uint32(f))
		if err != nil {
			return nil, fmt.Errorf("gpuactor/streams: creating an event: %w", err)
		}
		e := &Event{dev: dev, h: h, flags: f}
		tr.Own(e, func() error { return e.destroy(rt) })
		return e, nil
	}).Await(ctx)
}

// Device is the device the event belongs to.
func (e *Event) Device() *device.Device { return e.dev }

// Record records the event on s; see Stream.Record.
func (e *Event) Record(ctx context.Context, s *Stream) *Future { return s.Record(ctx, e) }

// Query reports whether the event's most recent record has completed (true for an event never
// recorded, as in CUDA).
func (e *Event) Query(ctx context.Context) (bool, error) {
	return device.Exec(ctx, e.dev, func(rt backend.Device, _ *device.Tracker) (bool, error) {
		if err := e.alive(); err != nil {
			return false, err
		}
		err := rt.EventQuery(e.h)
		if errors.Is(err, cudaerr.NotReady) {
			return false, nil
		}
		return err == nil, err
	}).Await(ctx)
}

// Synchronize waits until the event's most recent record has completed, without holding up
// the device's other work.
func (e *Event) Synchronize(ctx context.Context) error {
	_, err := device.ExecTracked(ctx, e.dev, func(_ backend.Device, tr *device.Tracker, done func(error)) error {
		if err := e.alive(); err != nil {
			return err
		}
		tr.AfterEvent(e.h, done)
		return nil
	}).Await(ctx)
	return err
}

// Elapsed is the GPU time between the completed records of start and end (both of one device,
// neither created with DisableTiming).
func Elapsed(ctx context.Context, start, end *Event) (time.Duration, error) {
	if start == nil || end == nil {
		return 0, invalid("Elapsed of a nil event")
	}
	if start.dev != end.dev {
		return 0, wrongDevice("end event", end.dev, start.dev)
	}
	if (start.flags|end.flags)&DisableTiming != 0 {
		return 0, invalid("Elapsed of an event created with DisableTiming")
	}
	ms, err := device.Exec(ctx, start.dev, func(rt backend.Device, _ *device.Tracker) (float32, error) {
		if err := start.alive(); err != nil {
			return 0, err
		}
		if err := end.alive(); err != nil {
			return 0, err
		}
		return rt.EventElapsed(start.h, end.h)
	}).Await(ctx)
	return time.Duration(float64(ms) * float64(time.Millisecond)), err
}

// awaitRecorded waits until the event's device has executed every record issued so far (or
// the latest one has failed): operations sent to two devices' actors are not ordered, and a
// Wait that ran before its Record would wait for nothing. It runs on the caller's goroutine,
// never on an actor, so it cannot hold up the device it waits for.
func (e *Event) awaitRecorded(ctx context.Context) error {
	want := e.issued.Load()
	for i := 0; e.recorded.Load() < want; i++ {
		if f := e.last.Load(); f != nil && f.Ready() {
			return nil // the record failed (the Wait then waits on the previous one) or already ran
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if i < 1000 {
			runtime.Gosched()
		} else {
			time.Sleep(10 * time.Microsecond)
		}
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

// Destroy destroys the event. Work already queued that records or waits on it is unaffected.
func (e *Event) Destroy(ctx context.Context) error {
	_, err := device.Exec(ctx, e.dev, func(rt backend.Device, tr *device.Tracker) (struct{}, error) {
		if e.destroyed.Load() {
			return struct{}{}, fmt.Errorf("%w: event destroyed twice", ErrDestroyed)
		}
		tr.Disown(e)
		return struct{}{}, e.destroy(rt)
	}).Await(ctx)
	return err
}

func (e *Event) destroy(rt backend.Device) error {
	e.destroyed.Store(true)
	return rt.EventDestroy(e.h)
}

func (e *Event) alive() error {
	if e.destroyed.Load() {
		return fmt.Errorf("%w: event used after Destroy", ErrDestroyed)
	}
	return nil
}
