package collective

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/streams"
)

// Group is operations launched together, NCCL's ncclGroupStart/ncclGroupEnd the actor
// way: the operations of each rank (each *Comm) are sent as one message to that rank's
// device actor, which issues them between ncclGroupStart and ncclGroupEnd on its own
// thread, and every rank's message is sent at once, so the ranks' groups run concurrently.
// Group the sends and receives of an exchange (an all-to-all, a ring step: alone, a send
// would wait for a receive its peer has not been able to issue), or several collectives
// NCCL should fuse into one launch.
//
// NCCL's groups are per thread; gpuactor gives each rank its own thread, NCCL's "one thread
// per device" mode, so no group spans ranks: see docs/design/collectives.md.
//
// The zero Group is empty and ready to use. A Group is not safe for concurrent use.
type Group struct {
	ops []Op
}

// Add appends ops to the group, of any of this process's ranks; the operations of one rank
// must all be on one stream, and run in the order added.
func (g *Group) Add(ops ...Op) *Group {
	g.ops = append(g.ops, ops...)
	return g
}

// Len is the number of operations added.
func (g *Group) Len() int { return len(g.ops) }

// Launch queues each rank's operations as one group on its stream and returns a future per
// rank, in the order each rank's first operation was added; each completes when the GPU
// has run that rank's group. Launch checks the whole group first: when an operation was
// refused, or one rank's operations are on two streams, nothing is launched (a partial
// group would leave the other ranks waiting) and every future fails with that error.
func (g *Group) Launch(ctx context.Context) []*streams.Future {
	var order []*Comm
	byComm := map[*Comm][]Op{}
	var bad error
	for _, o := range g.ops {
		if o.err != nil {
			bad = o.err
			break
		}
		have, ok := byComm[o.c]
		if !ok {
			order = append(order, o.c)
		} else if have[0].s != o.s {
			bad = fmt.Errorf("collective: a group with operations of rank %d (device %d) on two streams: %w",
				o.c.rank, o.c.dev.Ordinal(), errTwoStreams)
			break
		}
		byComm[o.c] = append(have, o)
	}
	if bad == nil && len(g.ops) == 0 {
		bad = errEmptyGroup
	}
	if bad != nil {
		n := max(len(order), 1)
		out := make([]*streams.Future, n)
		for i := range out {
			out[i] = failed(bad)
		}
		return out
	}
	out := make([]*streams.Future, len(order))
	for i, c := range order {
		out[i] = launchRank(ctx, byComm[c])
	}
	return out
}

// Run is Launch, then waits for every rank's group; it returns the first error.
func (g *Group) Run(ctx context.Context) error {
	fs := g.Launch(ctx)
	ws := make([]actor.Waiter, len(fs))
	for i, f := range fs {
		ws[i] = f
	}
	return actor.WaitAll(ctx, ws...)
}
