package interop

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/core"
)

// External memory and semaphores: objects another API (Vulkan, the CUDA driver API's
// cuMemExportToShareableHandle, another process) exported as POSIX file descriptors, imported
// into a device with cudaImportExternalMemory and cudaImportExternalSemaphore. Linux only.

// ErrExternalNotSupported is wrapped by the errors of imports the backend or platform cannot
// make: the simulator, which has no other API to import from, and platforms without POSIX file
// descriptors. The device stays usable.
var ErrExternalNotSupported = errors.New("gpuactor/interop: external memory and semaphores are not supported")

var errInvalid = core.ErrInvalidArgument

// externalError wraps a runtime error of call, marking the not-supported case.
func externalError(call string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, cudaerr.NotSupported) {
		return fmt.Errorf("%w: %s: %w", ErrExternalNotSupported, call, err)
	}
	return fmt.Errorf("gpuactor/interop: %s: %w", call, err)
}

// fdClaim hands a duplicated file descriptor to exactly one of two parties: the import on the
// actor thread, or the caller that left before the import ran, which closes it. So the
// duplicate is neither leaked nor closed under the runtime.
type fdClaim struct {
	fd    int
	state atomic.Int32 // 0: unclaimed; 1: the import took it; 2: the caller closed it
}

// take is the import's claim, on the actor thread.
func (c *fdClaim) take() bool { return c.state.CompareAndSwap(0, 1) }

// abandon closes the fd unless the import took it.
func (c *fdClaim) abandon() {
	if c.state.CompareAndSwap(0, 2) {
		closeFD(c.fd)
	}
}
