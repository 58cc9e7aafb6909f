package cudart

import "github.com/gpuactor/gpuactor/internal/backend"

// The device's conditional-node and generic-node calls. A kernel node goes through the generic
// calls when its kernel is a library kernel (cudaKernel_t, which they take as the function);
// a kernel of a driver-API module (runtimes before 12.8) goes through the per-kind calls that
// take its CUfunction.

func (d *device) GraphConditionalHandleCreate(g backend.Graph, def, flags uint32) (backend.ConditionalHandle, error) {
	return d.rt.GraphConditionalHandleCreate(g, def, flags)
}

// nodeKernel resolves p's kernel when p is a kernel node's parameters; legacy reports a kernel
// the generic calls cannot name.
func (d *device) nodeKernel(op string, p backend.NodeParams) (k Kernel, legacy bool, err error) {
	if p.Type != backend.NodeKernel {
		return Kernel{}, false, nil
	}
	k, err = d.kernel(op, p.Kernel.Kernel)
	return k, err == nil && k.API != LibraryAPI, err
}

func (d *device) GraphAddNode(g backend.Graph, deps []backend.GraphNode, p backend.NodeParams) (backend.GraphNode, []backend.Graph, error) {
	k, legacy, err := d.nodeKernel("cudaGraphAddNode", p)
	if err != nil {
		return 0, nil, err
	}
	if legacy {
		n, err := d.rt.GraphAddKernelNode(g, deps, k, p.Kernel)
		return n, nil, err
	}
	n, bodies, err := d.rt.GraphAddNode(g, deps, k, p)
	if err == nil && p.Type == backend.NodeKernel && p.Kernel.Attrs != (backend.LaunchAttrs{}) {
		err = d.rt.setKernelNodeAttrs(uintptr(n), k, p.Kernel.Attrs)
	}
	return n, bodies, err
}

func (d *device) GraphNodeSetParams(n backend.GraphNode, p backend.NodeParams) error {
	const op = "cudaGraphNodeSetParams"
	k, legacy, err := d.nodeKernel(op, p)
	if err != nil {
		return err
	}
	if legacy {
		return d.rt.newError(op+" (a kernel of a driver-API module: needs the library API, CUDA 12.8+)", codeNotSupported)
	}
	return d.rt.GraphNodeSetParams(n, k, p)
}

func (d *device) GraphExecNodeSetParams(x backend.GraphExec, n backend.GraphNode, p backend.NodeParams) error {
	k, legacy, err := d.nodeKernel("cudaGraphExecNodeSetParams", p)
	if err != nil {
		return err
	}
	if legacy {
		return d.rt.GraphExecKernelNodeSetParams(x, n, k, p.Kernel)
	}
	return d.rt.GraphExecNodeSetParams(x, n, k, p)
}

func (d *device) StreamBeginCaptureToGraph(s Stream, g backend.Graph, deps []backend.GraphNode, mode backend.CaptureMode) error {
	if err := d.rt.StreamBeginCaptureToGraph(s, g, deps, mode); err != nil {
		return err
	}
	d.graphs.open++
	return nil
}
