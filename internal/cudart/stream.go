package cudart

import "unsafe"

// StreamCreateWithPriority creates a stream on the current device (cudaStreamCreateWithPriority;
// flags: backend.Stream*, priority within DeviceGetStreamPriorityRange).
func (r *Runtime) StreamCreateWithPriority(flags uint32, priority int) (Stream, error) {
	var s uintptr
	err := r.call(fnStreamCreateWithPriority, uintptr(unsafe.Pointer(&s)), uintptr(flags), uintptr(priority))
	if err != nil {
		return 0, err
	}
	return Stream(s), nil
}

// StreamDestroy destroys s once its queued work completes (cudaStreamDestroy).
func (r *Runtime) StreamDestroy(s Stream) error { return r.call(fnStreamDestroy, uintptr(s)) }

// StreamSynchronize waits until all work on s has completed (cudaStreamSynchronize).
func (r *Runtime) StreamSynchronize(s Stream) error {
	f := getFrame()
	err := r.streamSynchronize(f, s)
	putFrame(f)
	return err
}

// StreamQuery returns nil when s is idle and an error matching cudaerr.NotReady while work is
// pending (cudaStreamQuery). The NotReady error is preallocated: polling does not allocate.
func (r *Runtime) StreamQuery(s Stream) error {
	f := getFrame()
	err := r.streamQuery(f, s)
	putFrame(f)
	return err
}

// StreamWaitEvent makes later work on s wait for e's latest record (cudaStreamWaitEvent, flags 0).
func (r *Runtime) StreamWaitEvent(s Stream, e Event) error {
	f := getFrame()
	err := r.streamWaitEvent(f, s, e)
	putFrame(f)
	return err
}
