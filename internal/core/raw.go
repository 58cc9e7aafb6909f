package core

import (
	"context"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// RawHandle is s's cudaStream_t. It is written once, when the stream is made, so any
// goroutine may read it.
func (s *Stream) RawHandle() backend.Stream { return s.h }

// Foreign reports whether s is another library's stream, wrapped by WrapStream.
func (s *Stream) Foreign() bool { return s.foreign }

// RawHandle is e's cudaEvent_t, written once when the event is made.
func (e *Event) RawHandle() backend.Event { return e.h }

// KnownStream reports whether h is the handle of a stream of d gpuactor tracks: its own
// stream, or one made or wrapped and not yet closed. Actor thread only.
func (d *Device) KnownStream(h backend.Stream) bool {
	if d.stream != nil && d.stream.h == h {
		return true
	}
	for k := range d.tracker.owned {
		if s, ok := k.(*Stream); ok && s.h == h && !s.closed.Load() {
			return true
		}
	}
	return false
}

// WrapStream makes a Stream of d over h, a stream another library created, after check has
// vetted it on the actor thread and said how it was made. gpuactor queues work on it and
// tracks that work like any stream's; its Close (or the device's) waits for that work and
// forgets the handle, never destroying it.
func WrapStream(ctx context.Context, d *Device, h backend.Stream, check func(rt backend.Device) (StreamConfig, error)) (*Stream, error) {
	return Make(ctx, d, func(rt backend.Device, tr *Tracker) (*Stream, error) {
		c, err := check(rt)
		if err != nil {
			return nil, err
		}
		s := &Stream{dev: d, h: h, blocking: c.Blocking, foreign: true}
		s.priority.Store(int64(c.Priority))
		tr.Own(s, func() error { return s.destroy(rt, tr) })
		return s, nil
	}, func(rt backend.Device, tr *Tracker, s *Stream) {
		tr.Disown(s)
		_ = s.destroy(rt, tr)
	})
}

// Foreign reports whether e is another library's event, wrapped by WrapEvent.
func (e *Event) Foreign() bool { return e.foreign }

// KnownEvent reports whether h is the handle of an event of d gpuactor tracks and has not
// closed. Actor thread only.
func (d *Device) KnownEvent(h backend.Event) bool {
	for k := range d.tracker.owned {
		if e, ok := k.(*Event); ok && e.h == h && !e.closed.Load() {
			return true
		}
	}
	return false
}

// WrapEvent makes an Event of d over h, an event another library created, with the flags it
// was made with, after check has vetted it on the actor thread. Its Close (or the device's)
// forgets the handle, never destroying it.
func WrapEvent(ctx context.Context, d *Device, h backend.Event, flags uint32, check func(rt backend.Device) error) (*Event, error) {
	return makeEvent(ctx, d, flags, true, func(rt backend.Device) (backend.Event, error) { return h, check(rt) })
}
