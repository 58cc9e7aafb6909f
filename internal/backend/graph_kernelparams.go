package backend

// KernelNodeInfo is what the runtime reports of a kernel node (cudaGraphKernelNodeGetParams):
// the kernel it launches, its shape and its dynamic shared memory. The arguments stay the
// runtime's: their bytes cannot be turned back into the values a caller passed.
type KernelNodeInfo struct {
	// Kernel is the node's kernel, 0 when its function is none the device loaded through
	// LoadModule and ModuleKernel (a kernel of another library, or of an unloaded module).
	Kernel      Kernel
	Grid, Block Dim3
	SharedMem   uint32
}

// GraphKernelParamsDevice reads a kernel node's parameters back from the runtime, whether the
// node was added through the API or captured from a stream.
type GraphKernelParamsDevice interface {
	// GraphKernelNodeGetParams is kernel node n's kernel, shape and dynamic shared memory; a
	// node of another kind is refused with cudaerr.InvalidValue.
	GraphKernelNodeGetParams(n GraphNode) (KernelNodeInfo, error)
}
