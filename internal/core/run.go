package core

import (
	"context"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Run runs fn on d's actor thread with the device's runtime and its completion tracker, and
// returns a future of fn's result: the way onto the thread for calls that ask or configure
// rather than queue GPU work. The device's guard applies: a failed device refuses fn.
func Run[T any](ctx context.Context, d *Device, fn func(rt backend.Device, tr *Tracker) (T, error)) *actor.Future[T] {
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
