package cudart

import (
	"slices"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// The device's per-kind node parameters (graph_params.go). Host functions set on a node are
// counted as GraphAddHostNode's are (backend_graph.go): the graph holding the node takes the
// new one's reference and drops the old one's; an executable graph keeps the functions it
// was given until it is destroyed, as after an update.

func (d *device) GraphKernelNodeSetParams(n backend.GraphNode, p backend.KernelNode) error {
	kern, err := d.kernel("cudaGraphKernelNodeSetParams", p.Kernel)
	if err != nil {
		return err
	}
	return d.rt.GraphKernelNodeSetParams(n, kern, p)
}

func (d *device) GraphMemcpyNodeGetParams(n backend.GraphNode) (backend.CopyNode, error) {
	p, err := d.rt.GraphMemcpyNodeGetParams(n)
	if err != nil {
		return backend.CopyNode{}, err
	}
	return copy1D(p)
}

func (d *device) GraphMemcpyNodeSetParams1D(n backend.GraphNode, p backend.CopyNode) error {
	return d.rt.GraphMemcpyNodeSetParams1D(n, uintptr(p.Dst), uintptr(p.Src), p.Bytes, MemcpyKind(p.Kind))
}

func (d *device) GraphExecMemcpyNodeSetParams1D(x backend.GraphExec, n backend.GraphNode, p backend.CopyNode) error {
	return d.rt.GraphExecMemcpyNodeSetParams1D(x, n, uintptr(p.Dst), uintptr(p.Src), p.Bytes, MemcpyKind(p.Kind))
}

func (d *device) GraphMemsetNodeGetParams(n backend.GraphNode) (backend.MemsetNode, error) {
	return d.rt.GraphMemsetNodeGetParams(n)
}

func (d *device) GraphMemsetNodeSetParams(n backend.GraphNode, p backend.MemsetNode) error {
	return d.rt.GraphMemsetNodeSetParams(n, p)
}

func (d *device) GraphExecMemsetNodeSetParams(x backend.GraphExec, n backend.GraphNode, p backend.MemsetNode) error {
	return d.rt.GraphExecMemsetNodeSetParams(x, n, p)
}

func (d *device) GraphHostNodeSetParams(g backend.Graph, n backend.GraphNode, fn func()) error {
	const op = "cudaGraphHostNodeSetParams"
	if fn == nil {
		return d.rt.newError(op, codeInvalidValue)
	}
	old, err := d.rt.GraphHostNodeUserData(n)
	if err != nil {
		return err
	}
	h := graphHosts.put(fn)
	if err := d.rt.GraphHostNodeSetParams(n, h|graphHostBit); err != nil {
		graphHosts.release([]uintptr{h})
		return err
	}
	d.graphs.init()
	hosts := append(d.graphs.graphs[g], h)
	if old&graphHostBit != 0 {
		if i := slices.Index(hosts, old&^graphHostBit); i >= 0 {
			hosts = slices.Delete(hosts, i, i+1)
			graphHosts.release([]uintptr{old &^ graphHostBit})
		}
	}
	d.graphs.graphs[g] = hosts
	return nil
}

func (d *device) GraphExecHostNodeSetParams(x backend.GraphExec, n backend.GraphNode, fn func()) error {
	if fn == nil {
		return d.rt.newError("cudaGraphExecHostNodeSetParams", codeInvalidValue)
	}
	h := graphHosts.put(fn)
	if err := d.rt.GraphExecHostNodeSetParams(x, n, h|graphHostBit); err != nil {
		graphHosts.release([]uintptr{h})
		return err
	}
	d.graphs.init()
	d.graphs.execs[x] = append(d.graphs.execs[x], h)
	return nil
}

func (d *device) GraphChildGraphNodeGetGraph(n backend.GraphNode) (backend.Graph, error) {
	return d.rt.GraphChildGraphNodeGetGraph(n)
}

func (d *device) GraphExecChildGraphNodeSetParams(x backend.GraphExec, n backend.GraphNode, child backend.Graph) error {
	if err := d.rt.GraphExecChildGraphNodeSetParams(x, n, child); err != nil {
		return err
	}
	d.graphs.init()
	hosts := d.graphs.execs[x]
	d.inherit(d.graphs.graphs[child], &hosts) // the child's host nodes are x's now
	d.graphs.execs[x] = hosts
	return nil
}

func (d *device) GraphEventRecordNodeGetEvent(n backend.GraphNode) (backend.Event, error) {
	return d.rt.GraphEventRecordNodeGetEvent(n)
}

func (d *device) GraphEventRecordNodeSetEvent(n backend.GraphNode, e backend.Event) error {
	return d.rt.GraphEventRecordNodeSetEvent(n, e)
}

func (d *device) GraphEventWaitNodeGetEvent(n backend.GraphNode) (backend.Event, error) {
	return d.rt.GraphEventWaitNodeGetEvent(n)
}

func (d *device) GraphEventWaitNodeSetEvent(n backend.GraphNode, e backend.Event) error {
	return d.rt.GraphEventWaitNodeSetEvent(n, e)
}

func (d *device) GraphExecEventRecordNodeSetEvent(x backend.GraphExec, n backend.GraphNode, e backend.Event) error {
	return d.rt.GraphExecEventRecordNodeSetEvent(x, n, e)
}

func (d *device) GraphExecEventWaitNodeSetEvent(x backend.GraphExec, n backend.GraphNode, e backend.Event) error {
	return d.rt.GraphExecEventWaitNodeSetEvent(x, n, e)
}

func (d *device) GraphMemAllocNodeGetParams(n backend.GraphNode) (backend.AllocNode, error) {
	return d.rt.GraphMemAllocNodeGetParams(n)
}

func (d *device) GraphMemFreeNodeGetParams(n backend.GraphNode) (backend.DevicePtr, error) {
	return d.rt.GraphMemFreeNodeGetParams(n)
}

func (d *device) GraphAddMemcpyNode1D(g backend.Graph, deps []backend.GraphNode, p backend.CopyNode) (backend.GraphNode, error) {
	return d.rt.GraphAddMemcpyNode1D(g, deps, uintptr(p.Dst), uintptr(p.Src), p.Bytes, MemcpyKind(p.Kind))
}

func (d *device) GraphKernelNodeGetAttrs(n backend.GraphNode) (backend.LaunchAttrs, error) {
	return d.rt.GraphKernelNodeGetAttrs(n)
}

// GraphKernelNodeSetAttrs sets the attributes through the runtime, whichever API added the
// node: a graph node is the driver's object either way.
func (d *device) GraphKernelNodeSetAttrs(n backend.GraphNode, a backend.LaunchAttrs) error {
	return d.rt.setKernelNodeAttrs(uintptr(n), Kernel{}, a)
}

func (d *device) GraphKernelNodeCopyAttributes(dst, src backend.GraphNode) error {
	return d.rt.GraphKernelNodeCopyAttributes(dst, src)
}
