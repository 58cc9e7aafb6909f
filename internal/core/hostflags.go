package core

import (
	"context"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// Flags is the cudaHostAlloc flags the runtime reports for the buffer (cudaHostGetFlags),
// asked on the actor thread, where Close runs; it returns once the device answered.
func (h *HostBuffer) Flags(ctx context.Context) (uint32, error) {
	if h == nil {
		return 0, Invalid("Flags of a nil pinned buffer")
	}
	return Run(ctx, h.dev, func(rt backend.Device, _ *Tracker) (uint32, error) {
		if h.closed.Load() {
			return 0, Closed("Flags of a pinned buffer after Close")
		}
		return rt.HostGetFlags(h.p)
	}).Await(ctx)
}
