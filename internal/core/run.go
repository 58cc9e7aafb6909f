package core

import (
	"context"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Run runs fn on d's actor thread with the device's runtime and its completion tracker, and
// returns a future of fn's result: the way onto the thread for calls that ask or configure
// rather than queue GPU work. The device's guard applies: a failed device refuses fn.
func Run[T any](ctx context.Context, d *Device, fn func(rt backend.Device, tr *Tracker) (T, error)) *actor.Future[T] {
	if d == nil {
		var zero T
		return actor.Completed(zero, errNilDevice)
	}
	return actor.Call(ctx, d.act, func() (T, error) { return fn(d.rt, d.tracker) })
}

// Do is Run for fn without a result, waiting for it.
func Do(ctx context.Context, d *Device, fn func(rt backend.Device, tr *Tracker) error) error {
	_, err := Run(ctx, d, func(rt backend.Device, tr *Tracker) (struct{}, error) { return struct{}{}, fn(rt, tr) }).Await(ctx)
	return err
}

// RunOn is Run with s's handle, refusing a closed stream: for calls on a stream that ask or
// configure (capture status, say), whose result is known when fn returns.
func RunOn[T any](ctx context.Context, s *Stream, fn func(rt backend.Device, tr *Tracker, h backend.Stream) (T, error)) *actor.Future[T] {
	if s == nil {
		var zero T
		return actor.Completed(zero, Invalid("operation on a nil stream"))
	}
	return Run(ctx, s.dev, func(rt backend.Device, tr *Tracker) (T, error) {
		if err := s.alive(); err != nil {
			var zero T
			return zero, err
		}
		return fn(rt, tr, s.h)
	})
}

// RunTracked runs fn on d's actor thread for work whose result is known only later: fn
// arranges for done to be called (from a tracker callback, say) and the future completes with
// done's error; an error fn returns completes it at once, as does whatever keeps fn from
// running (a failed or closed device, ctx, a panic).
func RunTracked(ctx context.Context, d *Device, fn func(rt backend.Device, tr *Tracker, done func(error)) error) *Future {
	p := actor.NewPromise[struct{}]()
	return actor.CallInto(ctx, d.act, p, func() (struct{}, error) {
		if err := fn(d.rt, d.tracker, func(err error) { p.Complete(struct{}{}, err) }); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, actor.ErrPending
	})
}

// Make runs mk on d's actor thread to make an object and returns it; it is Run for calls that
// acquire something (memory, a stream, a module). A caller whose ctx ends first leaves with
// ctx's error and holds nothing: the object is not made if mk has not run yet, and is given
// back with drop, on the actor thread, if it was made as the caller left; a caller who left
// after it was made takes it after all. So no cancelled call leaves an object nobody can
// free.
func Make[T any](ctx context.Context, d *Device, mk func(rt backend.Device, tr *Tracker) (T, error), drop func(rt backend.Device, tr *Tracker, v T)) (T, error) {
	const (
		pending int32 = iota
		made
		abandoned
	)
	var state atomic.Int32
	f := Run(ctx, d, func(rt backend.Device, tr *Tracker) (T, error) {
		var zero T
		if state.Load() == abandoned {
			return zero, context.Canceled // the caller left before this ran: make nothing
		}
		v, err := mk(rt, tr)
		if err != nil {
			return zero, err
		}
		if !state.CompareAndSwap(pending, made) {
			drop(rt, tr, v) // the caller left while this ran
			return zero, context.Canceled
		}
		return v, nil
	})
	v, err := f.Await(ctx)
	switch {
	case err == nil:
		return v, nil
	case f.Ready():
		return f.Value() // the op's own result, which may have raced in with ctx's end
	case state.CompareAndSwap(pending, abandoned):
		return v, err // ctx's error, and nothing is left made
	}
	return f.Await(context.WithoutCancel(ctx)) // made as the caller left: the caller takes it
}

// errNilDevice answers a call on a nil *Device: a mistake of the caller's, refused rather than
// a panic.
var errNilDevice = Invalid("call on a nil device")
