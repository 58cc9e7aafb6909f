package cudart

import (
	"runtime"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/nccl"
)

var _ backend.CollAnyThreadAborter = (*device)(nil)

// CollCommAbortAnyThread is ncclCommAbort from whatever goroutine calls it, while the actor
// may be parked in a blocking call on c. It reads none of the device's actor-thread state
// (the split slots: a blocking split hands out the comm itself). ncclCommAbort makes c's
// device current on the calling thread, so the goroutine keeps its thread for the call; no
// other code calls CUDA on a thread that is not an actor's.
func (d *device) CollCommAbortAnyThread(c backend.Comm) error {
	l, err := nccl.Load()
	if err != nil {
		return err
	}
	if c == 0 {
		return &backend.CollError{Code: backend.CollInvalidArgument, Call: "ncclCommAbort", Detail: "a nil communicator"}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return l.CommAbort(c)
}
