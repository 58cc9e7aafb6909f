package cudart

import "github.com/gpuactor/gpuactor/internal/backend"

// EventQueryAnyThread asks whether e's record has completed from any goroutine
// (backend.AnyThreadEventQuerier), on a call frame of the pool, not the device's own, which
// only its actor's thread uses. It calls the driver's cuEventQuery, which needs no current
// context (its errors are those of a bad handle or an uninitialized driver): a waiter's OS
// thread may never have had one, and the runtime's cudaEventQuery could set up a context
// there first. Where the driver's entry point could not be resolved, cudaEventQuery.
// CUDA_ERROR_NOT_READY is cudaErrorNotReady's value (600).
func (d *device) EventQueryAnyThread(e Event) error {
	if d.eventQuery == 0 {
		return d.rt.EventQuery(e)
	}
	f := getFrame()
	f.fn = d.eventQuery
	f.w[0] = uintptr(e)
	code := int32(ffiCall(f))
	putFrame(f)
	switch code {
	case 0:
		return nil
	case codeNotReady:
		return d.rt.notReadyEvent
	}
	return d.rt.driverError("cuEventQuery", code)
}

// anyThreadEventQuery resolves cuEventQuery for EventQueryAnyThread, on the thread that opens a
// device; 0 when the driver does not offer it.
func (r *Runtime) anyThreadEventQuery() uintptr {
	fn, err := r.drv.get(drvEventQuery)
	if err != nil {
		return 0
	}
	return fn
}

var _ backend.AnyThreadEventQuerier = (*device)(nil)
