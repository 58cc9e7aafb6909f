package remote

import "github.com/gpuactor/gpuactor/internal/backend"

// Stream-ordered allocations are calls: their answer is the address. The device's actor
// starts them (backend.AllocStarter) and collects the addresses when it first needs one, so
// that allocations queued together cost one round trip to the worker between them, not one
// each. The worker serves a started call in order with the requests around it, as any call.

// StartMallocAsync sends MallocAsync, or MallocFromPoolAsync from pool, without waiting for
// the worker's answer.
func (d *Device) StartMallocAsync(size uint64, pool backend.MemPool, fromPool bool, s backend.Stream) (backend.PendingAlloc, error) {
	var e enc
	if fromPool {
		e = request(mMallocFromPoolAsync)
		e.u64(size)
		e.u64(uint64(pool))
	} else {
		e = request(mMallocAsync)
		e.u64(size)
	}
	e.u64(uint64(s))
	sc, err := d.b.start(e)
	if err != nil {
		return nil, err
	}
	return (*pendingAlloc)(sc), nil
}

// pendingAlloc is a started allocation's call.
type pendingAlloc startedCall

// Wait returns the allocation's address or the worker's error.
func (p *pendingAlloc) Wait() (backend.DevicePtr, error) {
	r, err := (*startedCall)(p).wait()
	if err != nil {
		return 0, err
	}
	ptr := backend.DevicePtr(r.u64())
	return ptr, r.err
}
