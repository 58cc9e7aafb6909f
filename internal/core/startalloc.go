package core

import (
	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Started allocations. On a backend whose every call is a round trip (an isolated device's
// worker), an allocation's message would hold the actor for the round trip, its answer being
// the address. There the message only starts the allocation (backend.AllocStarter) and the
// actor collects the addresses later, in order, all that were started by then: when a message
// first uses one of the buffers (allocErr, on the way to every use), when the idle hook runs
// (between lists, and every few messages of a long one), when the tracker completes one's
// future, and before the device releases what is left. So allocations queued together, as a
// request's usually are, cost one round trip between them, and the buffer's address is still
// known before any message that uses it runs.

// startedAlloc is an allocation started and not yet collected.
type startedAlloc struct {
	b       *Buffer
	p       *actor.Promise[struct{}] // the allocation's message
	pending backend.PendingAlloc
}

// start starts b's allocation of b.size bytes on stream h, from pool (nil: the current one),
// whose message's promise is p. The GPU passing the allocation completes p, unless the
// allocation failed first. Actor thread only.
func (b *Buffer) start(h backend.Stream, pool *Pool, p *actor.Promise[struct{}]) error {
	d := b.dev
	var ph backend.MemPool
	if pool != nil {
		if err := pool.Alive(); err != nil {
			return b.allocFailed(err)
		}
		ph = pool.h
	}
	pending, err := d.starter.StartMallocAsync(b.size, ph, pool != nil, h)
	if err != nil {
		return b.allocFailed(err)
	}
	d.started = append(d.started, startedAlloc{b: b, p: p, pending: pending})
	d.tracker.After(h, func(err error) {
		d.settleAllocs() // a failed allocation completes p with its error first
		p.Complete(struct{}{}, err)
	})
	return nil
}

// settleAllocs collects every started allocation's address, in the order they were started:
// each buffer gets its memory, or fails with why, and a failure completes its message's
// future. Actor thread only.
func (d *Device) settleAllocs() {
	list := d.started
	d.started = nil
	for i, sa := range list {
		list[i] = startedAlloc{}
		b := sa.b
		ptr, err := sa.pending.Wait()
		if err != nil {
			err = b.allocFailed(err)
			b.fail(err)
			sa.p.Complete(struct{}{}, d.note(err))
			continue
		}
		b.ptr = ptr
		d.live.buffers.add(b)
		b.ready.Complete(struct{}{}, nil) // publishes ptr to DevicePtr
	}
	if d.started == nil {
		d.started = list[:0]
	}
}
