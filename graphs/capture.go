package graphs

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// Mode is a stream capture mode: which calls made during the capture, by whom, are refused
// because they could synchronize with the work being captured.
type Mode int32

// Capture modes.
const (
	// ThreadLocal forbids unsafe calls on the capturing thread: the device's actor thread,
	// which is where gpuactor makes every call of the device. The default.
	ThreadLocal = Mode(backend.CaptureThreadLocal)
	// Global also forbids them on every other thread of the process while the capture is open
	// (other devices' actors go on polling their own streams; see the package documentation).
	Global = Mode(backend.CaptureGlobal)
	// Relaxed forbids nothing.
	Relaxed = Mode(backend.CaptureRelaxed)
)

// String names the mode.
func (m Mode) String() string {
	switch m {
	case ThreadLocal:
		return "thread-local"
	case Global:
		return "global"
	case Relaxed:
		return "relaxed"
	}
	return fmt.Sprintf("Mode(%d)", int32(m))
}

// CaptureOption configures a capture.
type CaptureOption func(*capConfig)

type capConfig struct{ mode Mode }

// WithMode sets the capture mode (default ThreadLocal).
func WithMode(m Mode) CaptureOption { return func(c *capConfig) { c.mode = m } }

// Capturing is a capture in progress on a stream: what is queued on the stream from
// BeginCapture to End becomes a graph instead of running.
type Capturing struct {
	into    *Graph // the graph captured into (BeginCaptureInto); nil for a new graph
	pending *Graph // the new graph, once a condition or conditional node needed it (capturecond.go)
	s       *streams.Stream
	res     *resources // of the graph to be: host functions captured through a Recorder
	ended   atomic.Bool
}

// BeginCapture starts capturing s. If ctx ends before the capture has begun, a capture that
// begins anyway is ended and discarded, never left open; the device's Close also ends one.
func BeginCapture(ctx context.Context, s *streams.Stream, opts ...CaptureOption) (*Capturing, error) {
	c := capConfig{mode: ThreadLocal}
	for _, o := range opts {
		o(&c)
	}
	if c.mode < Global || c.mode > Relaxed {
		return nil, invalid("unknown capture mode %d", int32(c.mode))
	}
	if s == nil {
		return nil, invalid("BeginCapture on a nil stream")
	}
	f := core.RunOn(ctx, coreStream(s), func(rt backend.Device, tr *core.Tracker, h backend.Stream) (*Capturing, error) {
		added := tr.BeginCapture(h, backend.CaptureMode(c.mode))
		if err := rt.StreamBeginCapture(h, backend.CaptureMode(c.mode)); err != nil {
			if added {
				tr.EndCapture(h)
			}
			return nil, fmt.Errorf("%w: beginning a capture: %w", ErrCapture, err)
		}
		cp := &Capturing{s: s, res: &resources{}}
		tr.Own(cp, func() error { return cp.end(rt, tr, h, true) })
		return cp, nil
	})
	cp, err := f.Await(ctx)
	if err != nil && ctx.Err() != nil {
		go func() { // the op may still run: end what it begins
			if cp, err := f.Await(context.Background()); err == nil {
				_ = cp.Abort(context.Background())
			}
		}()
	}
	return cp, err
}

// Stream is the capturing stream.
func (c *Capturing) Stream() *streams.Stream {
	if c == nil {
		return nil
	}
	return c.s
}

// end ends the capture; on the actor thread. discard destroys the graph.
func (c *Capturing) end(rt backend.Device, tr *core.Tracker, h backend.Stream, discard bool) error {
	c.ended.Store(true)
	tr.Disown(c)
	g, err := rt.StreamEndCapture(h)
	tr.EndCapture(h)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCapture, err)
	}
	if discard && c.into == nil {
		return errors.Join(rt.GraphDestroy(g), c.dropPending(rt))
	}
	return nil
}

// End ends the capture and returns the captured graph. A capture that was invalidated (by a
// call the mode forbids, or by synchronizing the capturing stream) or that left forked work
// unjoined fails with ErrCapture and the runtime's error; its graph is discarded. End is
// never cancelled half-way: it runs even when ctx has ended, so the stream is never left
// capturing.
func (c *Capturing) End(ctx context.Context) (*Graph, error) {
	if c == nil {
		return nil, invalid("End of a nil capture")
	}
	if c.ended.Load() {
		return nil, invalid("capture ended twice")
	}
	ctx = context.WithoutCancel(ctx)
	return core.RunOn(ctx, coreStream(c.s), func(rt backend.Device, tr *core.Tracker, h backend.Stream) (*Graph, error) {
		if c.ended.Load() {
			return nil, invalid("capture ended twice")
		}
		c.ended.Store(true)
		tr.Disown(c)
		g, err := rt.StreamEndCapture(h)
		tr.EndCapture(h)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCapture, err)
		}
		return c.result(rt, tr, g), nil
	}).Await(ctx)
}

// Abort ends the capture and discards what it captured.
func (c *Capturing) Abort(ctx context.Context) error {
	if c == nil {
		return invalid("Abort of a nil capture")
	}
	if c.ended.Load() {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	_, err := core.RunOn(ctx, coreStream(c.s), func(rt backend.Device, tr *core.Tracker, h backend.Stream) (struct{}, error) {
		if c.ended.Load() {
			return struct{}{}, nil
		}
		return struct{}{}, c.end(rt, tr, h, true)
	}).Await(ctx)
	return err
}

// Capture runs fn with s capturing and returns the graph of what fn queued. If fn fails or
// panics, or ctx ends, the capture is ended and discarded and fn's error (or the panic) comes
// back; the stream is never left capturing.
func Capture(ctx context.Context, s *streams.Stream, fn func(ctx context.Context) error, opts ...CaptureOption) (*Graph, error) {
	if fn == nil {
		return nil, invalid("Capture of a nil function")
	}
	c, err := BeginCapture(ctx, s, opts...)
	if err != nil {
		return nil, err
	}
	return c.run(ctx, fn)
}

// run runs fn, then ends the capture, or aborts it when fn fails or panics.
func (c *Capturing) run(ctx context.Context, fn func(ctx context.Context) error) (g *Graph, err error) {
	defer func() {
		if r := recover(); r != nil {
			_ = c.Abort(ctx)
			panic(r)
		}
	}()
	if err := fn(ctx); err != nil {
		return nil, errors.Join(err, c.Abort(ctx))
	}
	if err := ctx.Err(); err != nil {
		return nil, errors.Join(err, c.Abort(ctx))
	}
	return c.End(ctx)
}

// CaptureStatus is a stream's capture state.
type CaptureStatus struct {
	Active      bool   // the stream is capturing
	Invalidated bool   // it is, but the capture was invalidated and will fail to end
	ID          uint64 // the capture's unique id, 0 when not capturing
}

// Status reports whether s is capturing.
func Status(ctx context.Context, s *streams.Stream) (CaptureStatus, error) {
	return core.RunOn(ctx, coreStream(s), func(rt backend.Device, _ *core.Tracker, h backend.Stream) (CaptureStatus, error) {
		info, err := rt.StreamCaptureInfo(h)
		if err != nil {
			return CaptureStatus{}, err
		}
		return CaptureStatus{Active: info.Status == backend.CaptureActive, Invalidated: info.Status == backend.CaptureInvalidated, ID: info.ID}, nil
	}).Await(ctx)
}
