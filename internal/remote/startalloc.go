package remote

import "github.com/gpuactor/gpuactor/internal/backend"

// Stream-ordered allocations are calls: their answer is the address. The device's actor
// starts them (backend.AllocStarter) and collects the addresses when it first needs one, so
// that allocations queued together cost one round trip to the worker between them, not one
// each. The worker serves a started call in order with the requests around it, as any call.
// The two halves of each call are generated (//remote:startable on the backend method).

// StartMallocAsync sends MallocAsync, or MallocFromPoolAsync from pool, without waiting for
// the worker's answer.
func (d *Device) StartMallocAsync(size uint64, pool backend.MemPool, fromPool bool, s backend.Stream) (backend.PendingAlloc, error) {
	var a pendingAlloc
	var err error
	if fromPool {
		a.c, err = d.startMallocFromPoolAsync(size, pool, s)
		a.result = resultMallocFromPoolAsync
	} else {
		a.c, err = d.startMallocAsync(size, s)
		a.result = resultMallocAsync
	}
	if err != nil {
		return nil, err
	}
	a.c.who = "parent: started call" // timed from send to collection, not to the answer
	return &a, nil
}

// pendingAlloc is a started allocation's call and the generated reader of its answer.
type pendingAlloc struct {
	c      startedCall
	result func(*startedCall) (backend.DevicePtr, error)
}

// Wait returns the allocation's address or the worker's error.
func (p *pendingAlloc) Wait() (backend.DevicePtr, error) { return p.result(&p.c) }
