package core

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// Stream is a CUDA stream of one device: the state streams.Stream is a face over.
type Stream struct {
	dev      *Device
	h        backend.Stream
	blocking bool
	priority atomic.Int64 // as created, then as SetPriority and CopyAttributes leave it
	own      bool         // the device's own stream: destroyed by the device's Close only
	foreign  bool         // another library's (WrapStream): gpuactor forgets it and never destroys it
	closed   atomic.Bool
	ext      atomic.Pointer[streamExt]
	inflight atomic.Int64 // operations sent and not completed
}

// InFlight is how many operations were sent to the stream and have not completed (0 for a
// nil stream).
func (s *Stream) InFlight() int64 {
	if s == nil {
		return 0
	}
	return s.inflight.Load()
}

// StreamExt is state a public package keeps per stream (streams' staging ring), released on
// the actor thread when the stream is destroyed, after its work has drained.
type StreamExt interface {
	Release(rt backend.Device) error
}

type streamExt struct{ v StreamExt }

// StreamConfig is how NewStream makes a stream.
type StreamConfig struct {
	Blocking    bool // synchronizes with the legacy default stream (cudaStreamDefault)
	Priority    int
	HasPriority bool // Priority was given; otherwise the lowest
}

// NewStream creates a stream on d.
func NewStream(ctx context.Context, d *Device, c StreamConfig) (*Stream, error) {
	return Make(ctx, d, func(rt backend.Device, tr *Tracker) (*Stream, error) {
		least, greatest, err := rt.StreamPriorityRange()
		if err != nil {
			return nil, err
		}
		if !c.HasPriority {
			c.Priority = least
		}
		if c.Priority > least || c.Priority < greatest {
			return nil, Invalid("stream priority %d outside the device's range [%d (highest), %d (lowest)]", c.Priority, greatest, least)
		}
		flags := backend.StreamNonBlocking
		if c.Blocking {
			flags = backend.StreamDefault
		}
		h, err := rt.StreamCreate(flags, c.Priority)
		if err != nil {
			return nil, fmt.Errorf("gpuactor/streams: creating a stream: %w", err)
		}
		s := &Stream{dev: d, h: h, blocking: c.Blocking}
		s.priority.Store(int64(c.Priority))
		tr.Own(s, func() error { return s.destroy(rt, tr) })
		return s, nil
	}, func(rt backend.Device, tr *Tracker, s *Stream) {
		tr.Disown(s)
		_ = s.destroy(rt, tr)
	})
}

// Device is the stream's device (nil for a nil stream).
func (s *Stream) Device() *Device {
	if s == nil {
		return nil
	}
	return s.dev
}

// Priority is the stream's priority (0 for a nil stream).
func (s *Stream) Priority() int {
	if s == nil {
		return 0
	}
	return int(s.priority.Load())
}

// Blocking reports whether the stream synchronizes with the legacy default stream (false for
// a nil stream).
func (s *Stream) Blocking() bool { return s != nil && s.blocking }

// Own reports whether s is its device's own stream.
func (s *Stream) Own() bool { return s.own }

// Ext is s's state of a public package, made by mk on first use. Safe from any goroutine.
func (s *Stream) Ext(mk func() StreamExt) StreamExt {
	if e := s.ext.Load(); e != nil {
		return e.v
	}
	s.ext.CompareAndSwap(nil, &streamExt{mk()})
	return s.ext.Load().v
}

// LoadedExt is s's state of a public package, or nil before Ext made it.
func (s *Stream) LoadedExt() StreamExt {
	if e := s.ext.Load(); e != nil {
		return e.v
	}
	return nil
}

// Close refuses further work on the stream, waits for the GPU to pass the work queued on it
// so far (completing its futures), then destroys it, and returns once it is destroyed; the
// device's other work goes on meanwhile. Closing twice, or the device's own stream, is an
// error.
func (s *Stream) Close(ctx context.Context) error {
	if s == nil {
		return Invalid("Close of a nil stream")
	}
	if s.own {
		return Invalid("the device's own stream is closed by the device's Close")
	}
	if err := s.dev.InHostFunc("Stream.Close"); err != nil {
		return err
	}
	return RunTracked(ctx, s.dev, func(rt backend.Device, tr *Tracker, done func(error)) error {
		if s.closed.Load() {
			return Closed("stream closed twice")
		}
		s.closed.Store(true)
		tr.Disown(s)
		if tr.Drained(s.h) { // its work is done: destroy it now, not after a watermark
			tr.drop(s.h)
			done(s.release(rt))
			return nil
		}
		tr.After(s.h, func(err error) {
			err = errors.Join(err, s.release(rt))
			tr.Retire(s.h)
			done(err)
		})
		return nil
	}).Wait(ctx)
}

// destroy settles the stream, blocking, and destroys it: when the device closes.
func (s *Stream) destroy(rt backend.Device, tr *Tracker) error {
	s.closed.Store(true)
	return errors.Join(tr.Settle(s.h, nil), s.release(rt))
}

// release frees the stream's public-package state and destroys it, once the GPU has passed
// its work; on the actor thread.
func (s *Stream) release(rt backend.Device) error {
	var err error
	if e := s.LoadedExt(); e != nil {
		err = e.Release(rt)
	}
	if s.foreign {
		return err
	}
	return errors.Join(err, rt.StreamDestroy(s.h))
}

// Alive is nil while s may take work, and an ErrClosed error once it was closed.
func (s *Stream) Alive() error { return s.alive() }

func (s *Stream) alive() error {
	if s.closed.Load() {
		return Closed("stream used after Close")
	}
	return nil
}
