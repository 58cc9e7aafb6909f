package streams

import (
	"context"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Enqueue is the extension point of packages that build on streams (alloc, graphs): op runs
// on the stream's device actor with the stream's handle and queues its work there; the future
// completes when the GPU has passed it, like every operation of this package. op's parameter
// types are internal to the module, so code outside it cannot call Enqueue.
func Enqueue(ctx context.Context, s *Stream, op func(rt backend.Device, tr *device.Tracker, h backend.Stream) error) *Future {
	if s == nil {
		return actor.Completed(struct{}{}, invalid("operation on a nil stream"))
	}
	return s.tracked(ctx, false, func(rt backend.Device, tr *device.Tracker) error { return op(rt, tr, s.h) })
}

// Exec runs op on the stream's device actor with the stream's handle and returns its result
// at once, not when the GPU gets there: for calls that only ask or configure (capture status,
// pool attributes), or that track completion themselves. A destroyed stream is refused.
func Exec[T any](ctx context.Context, s *Stream, op func(rt backend.Device, tr *device.Tracker, h backend.Stream) (T, error)) *actor.Future[T] {
	if s == nil {
		var zero T
		return actor.Completed(zero, invalid("operation on a nil stream"))
	}
	return device.Exec(ctx, s.dev, func(rt backend.Device, tr *device.Tracker) (T, error) {
		if err := s.alive(); err != nil {
			var zero T
			return zero, err
		}
		return op(rt, tr, s.h)
	})
}
