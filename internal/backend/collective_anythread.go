package backend

// CollAnyThreadAborter is implemented by a Device whose blocking communicators may park its
// actor thread inside NCCL (the CUDA backend). It is not part of Device: it is the one
// collective call made off the actor thread, and a remote device cannot serve it (its
// worker's actor is the thread that is parked; ending the worker frees it).
type CollAnyThreadAborter interface {
	// CollCommAbortAnyThread is ncclCommAbort called from any goroutine while the device's
	// actor may be inside a blocking NCCL call on c: NCCL documents abort as the way to
	// free a hanging call, which then returns an error. c is freed: the caller must make
	// sure nothing calls NCCL with c afterwards, the actor returning from the aborted call
	// included. c must be a communicator made blocking (never the handle of a non-blocking
	// split still in progress).
	CollCommAbortAnyThread(c Comm) error
}
