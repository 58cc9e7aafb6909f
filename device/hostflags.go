package device

import (
	"context"

	"github.com/gpuactor/gpuactor/internal/core"
)

// Flags is the allocation flags the runtime reports for the buffer (cudaHostGetFlags): the
// HostFlag values it was allocated with, to which a GPU with unified addressing may add
// HostMapped, as all its pinned memory is mapped. It runs on the device's actor and returns
// once the device answered; after Close it is an ErrClosed error.
func (h *HostBuffer) Flags(ctx context.Context) (HostFlag, error) {
	if h == nil {
		return 0, core.Invalid("Flags of a nil pinned buffer")
	}
	f, err := h.core().Flags(ctx)
	return HostFlag(f), err
}
