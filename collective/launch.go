package collective

import (
	"context"
	"errors"
	"fmt"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

func failed(err error) *streams.Future { return actor.Completed(struct{}{}, err) }

// Launch queues op on its stream, on its device's actor, and returns without waiting: the
// future completes when the GPU has run the operation, like a copy's or a kernel's. Every
// rank of the communicator must launch the matching operation, each from wherever it likes:
// each rank's actor issues its own, so no rank waits for another to be called. An op its
// constructor refused fails the future at once.
//
// The first operation between two ranks connects them, which needs the peer. A blocking
// communicator's NCCL call parks the device's actor until then; a non-blocking one's
// returns, and the actor waits for NCCL before serving the stream further. If ctx ends or
// Abort is called meanwhile, the communicator is aborted (from another goroutine when the
// actor is parked), since NCCL cannot take one operation back.
func Launch(ctx context.Context, op Op) *streams.Future {
	return launchRank(ctx, []Op{op})
}

// launchRank queues ops, all of one comm and one stream, as one message: one NCCL call, or
// several between ncclGroupStart and ncclGroupEnd on the actor's thread.
func launchRank(ctx context.Context, ops []Op) *streams.Future {
	for _, o := range ops {
		if o.err != nil {
			return failed(o.err)
		}
	}
	c, s, name := ops[0].c, ops[0].s, ops[0].name
	if len(ops) > 1 {
		name = fmt.Sprintf("a group of %d operations", len(ops))
	}
	if err := c.alive(name); err != nil {
		return failed(err)
	}
	cd := c.core()
	return core.Queue(ctx, (*core.Stream)(s), func(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
		if err := c.alive(name); err != nil {
			return err
		}
		args := make([]backend.CollOp, len(ops))
		for i := range ops {
			a, err := ops[i].resolve(cd)
			if err != nil {
				return err
			}
			args[i] = a
		}
		err := c.parked(ctx, rt, func() error { return rt.CollLaunch(c.h, h, args) })
		if errors.Is(err, backend.ErrCollInProgress) {
			err = c.settle(ctx, rt)
		}
		if err != nil {
			return fmt.Errorf("collective: %s of rank %d of %d on device %d: %w", name, c.rank, c.count, c.dev.Ordinal(), err)
		}
		return nil
	})
}

// AllReduce launches AllReduceOp(s, c, send, recv, op).
func AllReduce[T Elem](ctx context.Context, s *streams.Stream, c *Comm, send, recv *alloc.Buffer[T], op Reduction) *streams.Future {
	return Launch(ctx, AllReduceOp(s, c, send, recv, op))
}

// Broadcast launches BroadcastOp(s, c, send, recv, root).
func Broadcast[T Elem](ctx context.Context, s *streams.Stream, c *Comm, send, recv *alloc.Buffer[T], root int) *streams.Future {
	return Launch(ctx, BroadcastOp(s, c, send, recv, root))
}

// Reduce launches ReduceOp(s, c, send, recv, op, root).
func Reduce[T Elem](ctx context.Context, s *streams.Stream, c *Comm, send, recv *alloc.Buffer[T], op Reduction, root int) *streams.Future {
	return Launch(ctx, ReduceOp(s, c, send, recv, op, root))
}

// AllGather launches AllGatherOp(s, c, send, recv).
func AllGather[T Elem](ctx context.Context, s *streams.Stream, c *Comm, send, recv *alloc.Buffer[T]) *streams.Future {
	return Launch(ctx, AllGatherOp(s, c, send, recv))
}

// ReduceScatter launches ReduceScatterOp(s, c, send, recv, op).
func ReduceScatter[T Elem](ctx context.Context, s *streams.Stream, c *Comm, send, recv *alloc.Buffer[T], op Reduction) *streams.Future {
	return Launch(ctx, ReduceScatterOp(s, c, send, recv, op))
}

// Send launches SendOp(s, c, buf, peer). A send and a receive between two ranks that wait
// on each other must be grouped instead (Group).
func Send[T Elem](ctx context.Context, s *streams.Stream, c *Comm, buf *alloc.Buffer[T], peer int) *streams.Future {
	return Launch(ctx, SendOp(s, c, buf, peer))
}

// Recv launches RecvOp(s, c, buf, peer).
func Recv[T Elem](ctx context.Context, s *streams.Stream, c *Comm, buf *alloc.Buffer[T], peer int) *streams.Future {
	return Launch(ctx, RecvOp(s, c, buf, peer))
}
