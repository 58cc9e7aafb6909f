package cudart

import (
	"runtime"
	"structs"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// kernelNodeParams is the driver's CUDA_KERNEL_NODE_PARAMS_v2 (72 bytes). Its first 56 bytes
// are also the runtime's cudaKernelNodeParams and the driver's v1 struct, so one value serves
// every entry point: the driver's _v2 functions (12.0+, what cudaGetDriverEntryPoint hands a
// 12+ runtime) ignore kern and ctx when func is set, and v1 functions never read them.
type kernelNodeParams struct {
	_            structs.HostLayout
	fn           uintptr // CUfunction, or a cudaKernel_t for the runtime's calls
	grid, block  [3]uint32
	sharedMem    uint32
	kernelParams unsafe.Pointer // void**
	extra        uintptr
	kern         uintptr
	ctx          uintptr
}

// kernelNode packs p's arguments, naming k by its CUfunction when it has one (the driver's
// calls take that) and by its cudaKernel_t otherwise; the params and the argument storage stay
// referenced from the returned value, which must be kept alive across the call.
func kernelNode(k Kernel, p backend.KernelNode) *kernelNodeParams {
	var args KernelArgs
	for _, a := range p.Args {
		args.Add(argBits(a))
	}
	prm := &kernelNodeParams{
		fn:        k.Handle,
		grid:      [3]uint32{p.Grid.X, p.Grid.Y, p.Grid.Z},
		block:     [3]uint32{p.Block.X, p.Block.Y, p.Block.Z},
		sharedMem: p.SharedMem,
	}
	if k.Func != 0 {
		prm.fn = k.Func
	}
	if ptrs := args.Pointers(); len(ptrs) > 0 {
		prm.kernelParams = unsafe.Pointer(&ptrs[0])
	}
	return prm
}

// GraphAddKernelNode adds a kernel node. A kernel with a CUfunction goes through the driver's
// cuGraphAddKernelNode (every DriverAPI kernel, and LibraryAPI ones the driver resolved);
// otherwise the runtime's cudaGraphAddKernelNode gets the cudaKernel_t as its function.
// The runtime copies the arguments during the call.
func (r *Runtime) GraphAddKernelNode(g backend.Graph, deps []backend.GraphNode, k Kernel, p backend.KernelNode) (backend.GraphNode, error) {
	var node uintptr
	var err error
	prm := kernelNode(k, p)
	if k.Func != 0 {
		err = r.driverCall(drvGraphAddKernelNode, uintptr(unsafe.Pointer(&node)), uintptr(g), nodeList(deps), uintptr(len(deps)),
			uintptr(unsafe.Pointer(prm)))
	} else {
		err = r.call(fnGraphAddKernelNode, uintptr(unsafe.Pointer(&node)), uintptr(g), nodeList(deps), uintptr(len(deps)),
			uintptr(unsafe.Pointer(prm)))
	}
	runtime.KeepAlive(prm)
	runtime.KeepAlive(deps)
	if err == nil && p.Attrs != (backend.LaunchAttrs{}) {
		err = r.setKernelNodeAttrs(node, k, p.Attrs)
	}
	return backend.GraphNode(node), err
}

// setKernelNodeAttrs sets a kernel node's launch attributes one by one:
// cuGraphKernelNodeSetAttribute(CUgraphNode, CUkernelNodeAttrID, const CUkernelNodeAttrValue*)
// for a kernel with a CUfunction, else cudaGraphKernelNodeSetAttribute (same ids, same 64-byte
// value union).
func (r *Runtime) setKernelNodeAttrs(node uintptr, k Kernel, a backend.LaunchAttrs) error {
	f := getLaunchFrame()
	defer putLaunchFrame(f)
	f.set(Dim3{}, Dim3{}, 0, 0, a)
	for i := range f.n {
		at := &f.attrs[i]
		var err error
		if k.Func != 0 {
			err = r.driverCall(drvGraphKernelNodeSetAttribute, node, uintptr(at.id), uintptr(unsafe.Pointer(&at.val)))
		} else {
			err = r.call(fnGraphKernelNodeSetAttribute, node, uintptr(at.id), uintptr(unsafe.Pointer(&at.val)))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// GraphExecKernelNodeSetParams changes a kernel node of x, through the same API that added
// kernels like k (see GraphAddKernelNode). The runtime copies the arguments during the call.
// A node captured from a stream was added by whatever launched it; cuLaunchKernel for kernels
// with a CUfunction, which is also what this picks for them.
func (r *Runtime) GraphExecKernelNodeSetParams(x backend.GraphExec, n backend.GraphNode, k Kernel, p backend.KernelNode) error {
	prm := kernelNode(k, p)
	var err error
	if k.Func != 0 {
		err = r.driverCall(drvGraphExecKernelNodeSetParams, uintptr(x), uintptr(n), uintptr(unsafe.Pointer(prm)))
	} else {
		err = r.call(fnGraphExecKernelNodeSetParams, uintptr(x), uintptr(n), uintptr(unsafe.Pointer(prm)))
	}
	runtime.KeepAlive(prm)
	return err
}
