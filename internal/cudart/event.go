package cudart

import "unsafe"

// EventCreateWithFlags creates an event (cudaEventCreateWithFlags; flags: backend.Event*).
func (r *Runtime) EventCreateWithFlags(flags uint32) (Event, error) {
	var e uintptr
	if err := r.call(fnEventCreateWithFlags, uintptr(unsafe.Pointer(&e)), uintptr(flags)); err != nil {
		return 0, err
	}
	return Event(e), nil
}

// EventRecord records e at the current end of s (cudaEventRecord).
func (r *Runtime) EventRecord(e Event, s Stream) error {
	f := getFrame()
	err := r.eventRecord(f, e, s)
	putFrame(f)
	return err
}

// EventQuery returns nil once e's record has completed and an error matching cudaerr.NotReady
// before (cudaEventQuery). The NotReady error is preallocated.
func (r *Runtime) EventQuery(e Event) error {
	f := getFrame()
	err := r.eventQuery(f, e)
	putFrame(f)
	return err
}

// EventSynchronize waits for e's record to complete (cudaEventSynchronize).
func (r *Runtime) EventSynchronize(e Event) error {
	f := getFrame()
	err := r.eventSynchronize(f, e)
	putFrame(f)
	return err
}

// EventElapsedTime is the time in milliseconds between two completed records
// (cudaEventElapsedTime; its result is written through a float*).
func (r *Runtime) EventElapsedTime(start, end Event) (float32, error) {
	var ms float32
	err := r.call(fnEventElapsedTime, uintptr(unsafe.Pointer(&ms)), uintptr(start), uintptr(end))
	return ms, err
}

// EventDestroy destroys e (cudaEventDestroy).
func (r *Runtime) EventDestroy(e Event) error { return r.call(fnEventDestroy, uintptr(e)) }
