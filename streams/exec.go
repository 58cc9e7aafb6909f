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
	return s.tracked(ctx, tracking{}, op)
}

// EnqueueThen is Enqueue whose future completes with then's result: then runs on the device's
// actor thread once the GPU has passed op's work, with the error it ended with, and returns
// the future's (graphs turns a host node's panic into the launch's error this way, without a
// goroutine per launch). then must be brief and must not wait. An error of op itself completes
// the future without then.
func EnqueueThen(ctx context.Context, s *Stream, op func(rt backend.Device, tr *device.Tracker, h backend.Stream) error, then func(error) error) *Future {
	if s == nil {
		return actor.Completed(struct{}{}, invalid("operation on a nil stream"))
	}
	if then == nil {
		return actor.Completed(struct{}{}, invalid("EnqueueThen with a nil then"))
	}
	return s.tracked(ctx, tracking{then: then}, op)
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

// AllocAsync is the extension point of stream-ordered allocation (alloc.MallocAsync):
// device.AllocAsync of b on the stream's device, with self's AllocateOn run against the
// stream's handle (a destroyed stream is refused) and msg completed when the GPU has passed
// the allocation. o, the message's stream part, is held by the caller (beside b and msg, so
// that an allocation is one object); it must be fresh. It returns without waiting for the
// device; see device.AllocAsync.
func AllocAsync(ctx context.Context, s *Stream, b *device.Buffer, size uint64, kind device.MemKind, msg *Future,
	release func(rt backend.Device, p device.DevicePtr, s backend.Stream) error, o *AllocOp, self StreamAllocator) error {
	if s == nil {
		return invalid("allocation on a nil stream")
	}
	if o.s != nil {
		return actor.ErrFutureReused
	}
	o.s, o.msg, o.self = s, msg, self
	return device.AllocAsync(ctx, s.dev, b, size, kind, msg, release, (*allocator)(o))
}

// StreamAllocator makes a stream-ordered allocation's memory on a stream, on the actor thread.
type StreamAllocator interface {
	AllocateOn(rt backend.Device, h backend.Stream) (device.DevicePtr, error)
}

// AllocOp is the stream part of a stream-ordered allocation (AllocAsync).
type AllocOp struct {
	s    *Stream
	msg  *Future
	self StreamAllocator
}

// allocator is an AllocOp as device.AllocAsync runs it, without Allocate in AllocOp's own API.
type allocator AllocOp

func (o *allocator) Allocate(rt backend.Device, tr *device.Tracker) (device.DevicePtr, error) {
	if err := o.s.alive(); err != nil {
		return 0, err
	}
	p, err := o.self.AllocateOn(rt, o.s.h)
	if err != nil {
		return 0, err
	}
	tr.AfterFuture(o.s.h, o.msg)
	return p, nil
}
