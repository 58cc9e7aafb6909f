package cudart

import (
	"errors"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// GraphKernelNodeGetParams reads a kernel node's parameters: through the driver's
// cuGraphKernelNodeGetParams (CUDA_KERNEL_NODE_PARAMS_v2 on 12+, whose first 56 bytes are the
// 11.x struct and the runtime's cudaKernelNodeParams), which reports a node added or captured
// with a CUfunction as that function, and a kernel node of the library API with its CUkernel;
// where the driver's entry point cannot be resolved, through cudaGraphKernelNodeGetParams.
// The argument pointers in the result are the node's and are not read.
func (r *Runtime) GraphKernelNodeGetParams(n backend.GraphNode) (fn, kern uintptr, p backend.KernelNodeInfo, err error) {
	prm := new(kernelNodeParams)
	err = r.driverCall(drvGraphKernelNodeGetParams, uintptr(n), uintptr(unsafe.Pointer(prm)))
	if se := (*SymbolError)(nil); errors.As(err, &se) {
		*prm = kernelNodeParams{}
		err = r.call(fnGraphKernelNodeGetParams, uintptr(n), uintptr(unsafe.Pointer(prm)))
	}
	if err != nil {
		return 0, 0, backend.KernelNodeInfo{}, err
	}
	return prm.fn, prm.kern, backend.KernelNodeInfo{
		Grid:      backend.Dim3{X: prm.grid[0], Y: prm.grid[1], Z: prm.grid[2]},
		Block:     backend.Dim3{X: prm.block[0], Y: prm.block[1], Z: prm.block[2]},
		SharedMem: prm.sharedMem,
	}, nil
}

// GraphKernelNodeGetParams reads kernel node n and names its kernel by the handle this
// backend gave it: the kernel whose CUfunction, or whose cudaKernel_t/CUkernel, the node
// reports.
func (d *device) GraphKernelNodeGetParams(n backend.GraphNode) (backend.KernelNodeInfo, error) {
	fn, kern, p, err := d.rt.GraphKernelNodeGetParams(n)
	if err != nil {
		return p, err
	}
	d.b.mu.RLock()
	defer d.b.mu.RUnlock()
	for h, k := range d.b.kernels {
		if (fn != 0 && (k.Func == fn || k.Handle == fn)) || (kern != 0 && k.Handle == kern) {
			p.Kernel = h
			break
		}
	}
	return p, nil
}
