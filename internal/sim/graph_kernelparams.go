package sim

import "github.com/gpuactor/gpuactor/internal/backend"

// GraphKernelNodeGetParams reads kernel node h back, added or captured. Its kernel is 0 once
// the kernel's module was unloaded, as the runtime's function would name nothing loaded.
func (d *device) GraphKernelNodeGetParams(h backend.GraphNode) (backend.KernelNodeInfo, error) {
	var out backend.KernelNodeInfo
	err := d.withNode("cudaGraphKernelNodeGetParams", h, backend.NodeKernel, func(n *snode) error {
		out = backend.KernelNodeInfo{Grid: n.params.Grid, Block: n.params.Block, SharedMem: n.params.SharedMem}
		d.b.mu.RLock()
		if k := d.b.kernels[n.params.Kernel]; k != nil && k == n.kern {
			out.Kernel = k.h
		}
		d.b.mu.RUnlock()
		return nil
	})
	return out, err
}
