package cudart

import (
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// graphRefs tracks which graph host functions (graph_host.go) each graph and executable graph
// of a device holds, so that a function is forgotten once nothing can call it any more.
// Actor thread only, like the device.
type graphRefs struct {
	graphs   map[backend.Graph][]uintptr
	execs    map[backend.GraphExec][]uintptr
	captures map[uint64][]uintptr // by capture id: host functions captured so far
	open     int                  // captures begun on the device and not yet ended
}

func (g *graphRefs) init() {
	if g.graphs == nil {
		g.graphs = map[backend.Graph][]uintptr{}
		g.execs = map[backend.GraphExec][]uintptr{}
		g.captures = map[uint64][]uintptr{}
	}
}

// launchHostFunc is LaunchHostFunc while a capture is open on the device: a host function
// queued on a capturing stream becomes a host node, which runs at every launch of the graph,
// so it gets a persistent handle owned by the capture.
func (d *device) launchHostFunc(s Stream, fn func()) error {
	info, err := d.rt.StreamCaptureInfo(s)
	if err != nil || info.Status != backend.CaptureActive {
		return d.rt.LaunchHostFunc(s, fn)
	}
	if fn == nil {
		return d.rt.newError("cudaLaunchHostFunc", codeInvalidValue)
	}
	h := graphHosts.put(fn)
	if err := d.rt.call(fnLaunchHostFunc, uintptr(s), hostFuncTrampoline(), h|graphHostBit); err != nil {
		graphHosts.release([]uintptr{h})
		return err
	}
	d.graphs.init()
	d.graphs.captures[info.ID] = append(d.graphs.captures[info.ID], h)
	return nil
}

func (d *device) StreamBeginCapture(s Stream, mode backend.CaptureMode) error {
	if err := d.rt.StreamBeginCapture(s, mode); err != nil {
		return err
	}
	d.graphs.open++
	return nil
}

func (d *device) StreamEndCapture(s Stream) (backend.Graph, error) {
	d.graphs.init()
	info, infoErr := d.rt.StreamCaptureInfo(s)
	g, err := d.rt.StreamEndCapture(s)
	if infoErr == nil && info.Status != backend.CaptureNone {
		d.graphs.open--
		hosts := d.graphs.captures[info.ID]
		delete(d.graphs.captures, info.ID)
		if err == nil && g != 0 {
			d.graphs.graphs[g] = append(d.graphs.graphs[g], hosts...) // a graph captured into keeps its own
		} else {
			graphHosts.release(hosts)
		}
	}
	return g, err
}

func (d *device) StreamCaptureInfo(s Stream) (backend.CaptureInfo, error) {
	return d.rt.StreamCaptureInfo(s)
}

func (d *device) GraphCreate() (backend.Graph, error) { return d.rt.GraphCreate() }

func (d *device) GraphDestroy(g backend.Graph) error {
	if err := d.rt.GraphDestroy(g); err != nil {
		return err
	}
	d.graphs.init()
	graphHosts.release(d.graphs.graphs[g])
	delete(d.graphs.graphs, g)
	return nil
}

// inherit gives to the host functions that from holds, with a reference each.
func (d *device) inherit(from []uintptr, to *[]uintptr) {
	graphHosts.retain(from)
	*to = append(*to, from...)
}

func (d *device) GraphClone(g backend.Graph) (backend.Graph, error) {
	c, err := d.rt.GraphClone(g)
	if err != nil {
		return 0, err
	}
	d.graphs.init()
	hosts := d.graphs.graphs[c]
	d.inherit(d.graphs.graphs[g], &hosts)
	d.graphs.graphs[c] = hosts
	return c, nil
}

func (d *device) GraphNodes(g backend.Graph) ([]backend.GraphNode, error) { return d.rt.GraphNodes(g) }
func (d *device) GraphRootNodes(g backend.Graph) ([]backend.GraphNode, error) {
	return d.rt.GraphRootNodes(g)
}
func (d *device) GraphEdges(g backend.Graph) ([]backend.GraphNode, []backend.GraphNode, error) {
	return d.rt.GraphEdges(g)
}
func (d *device) GraphNodeType(n backend.GraphNode) (backend.NodeType, error) {
	return d.rt.GraphNodeType(n)
}
func (d *device) GraphAddDependencies(g backend.Graph, from, to []backend.GraphNode) error {
	return d.rt.GraphAddDependencies(g, from, to)
}
func (d *device) GraphDebugDot(g backend.Graph, path string) error {
	return d.rt.GraphDebugDot(g, path)
}

// kernel resolves a kernel handle handed out by ModuleKernel.
func (d *device) kernel(op string, k backend.Kernel) (Kernel, error) {
	d.b.mu.RLock()
	kern, ok := d.b.kernels[k]
	d.b.mu.RUnlock()
	if !ok {
		return Kernel{}, d.rt.newError(op, codeInvalidResourceHandle)
	}
	return kern, nil
}

func (d *device) GraphAddKernelNode(g backend.Graph, deps []backend.GraphNode, p backend.KernelNode) (backend.GraphNode, error) {
	kern, err := d.kernel("cudaGraphAddKernelNode", p.Kernel)
	if err != nil {
		return 0, err
	}
	return d.rt.GraphAddKernelNode(g, deps, kern, p)
}

func (d *device) GraphAddCopyHtoD(g backend.Graph, deps []backend.GraphNode, dst DevicePtr, src unsafe.Pointer, n uint64) (backend.GraphNode, error) {
	return d.rt.GraphAddMemcpyNode1D(g, deps, uintptr(dst), uintptr(src), n, MemcpyHostToDevice)
}

func (d *device) GraphAddCopyDtoH(g backend.Graph, deps []backend.GraphNode, dst unsafe.Pointer, src DevicePtr, n uint64) (backend.GraphNode, error) {
	return d.rt.GraphAddMemcpyNode1D(g, deps, uintptr(dst), uintptr(src), n, MemcpyDeviceToHost)
}

func (d *device) GraphAddCopyDtoD(g backend.Graph, deps []backend.GraphNode, dst, src DevicePtr, n uint64) (backend.GraphNode, error) {
	return d.rt.GraphAddMemcpyNode1D(g, deps, uintptr(dst), uintptr(src), n, MemcpyDeviceToDevice)
}

func (d *device) GraphAddMemsetNode(g backend.Graph, deps []backend.GraphNode, p DevicePtr, value byte, n uint64) (backend.GraphNode, error) {
	return d.rt.GraphAddMemsetNode(g, deps, p, value, n)
}

func (d *device) GraphAddHostNode(g backend.Graph, deps []backend.GraphNode, fn func()) (backend.GraphNode, error) {
	if fn == nil {
		return 0, d.rt.newError("cudaGraphAddHostNode", codeInvalidValue)
	}
	h := graphHosts.put(fn)
	node, err := d.rt.GraphAddHostNode(g, deps, h|graphHostBit)
	if err != nil {
		graphHosts.release([]uintptr{h})
		return 0, err
	}
	d.graphs.init()
	d.graphs.graphs[g] = append(d.graphs.graphs[g], h)
	return node, nil
}

func (d *device) GraphAddChildNode(g backend.Graph, deps []backend.GraphNode, child backend.Graph) (backend.GraphNode, error) {
	node, err := d.rt.GraphAddChildNode(g, deps, child)
	if err != nil {
		return 0, err
	}
	d.graphs.init()
	hosts := d.graphs.graphs[g]
	d.inherit(d.graphs.graphs[child], &hosts)
	d.graphs.graphs[g] = hosts
	return node, nil
}

func (d *device) GraphAddEmptyNode(g backend.Graph, deps []backend.GraphNode) (backend.GraphNode, error) {
	return d.rt.GraphAddEmptyNode(g, deps)
}

func (d *device) GraphAddEventRecordNode(g backend.Graph, deps []backend.GraphNode, e Event) (backend.GraphNode, error) {
	return d.rt.GraphAddEventRecordNode(g, deps, e)
}

func (d *device) GraphAddEventWaitNode(g backend.Graph, deps []backend.GraphNode, e Event) (backend.GraphNode, error) {
	return d.rt.GraphAddEventWaitNode(g, deps, e)
}

func (d *device) GraphAddMemAllocNode(g backend.Graph, deps []backend.GraphNode, size uint64) (backend.GraphNode, DevicePtr, error) {
	return d.rt.GraphAddMemAllocNode(g, deps, d.ordinal, size)
}

func (d *device) GraphAddMemFreeNode(g backend.Graph, deps []backend.GraphNode, p DevicePtr) (backend.GraphNode, error) {
	return d.rt.GraphAddMemFreeNode(g, deps, p)
}

func (d *device) GraphInstantiate(g backend.Graph, flags uint64) (backend.GraphExec, error) {
	x, err := d.rt.GraphInstantiate(g, flags)
	if err != nil {
		return 0, err
	}
	d.graphs.init()
	var hosts []uintptr
	d.inherit(d.graphs.graphs[g], &hosts)
	d.graphs.execs[x] = hosts
	return x, nil
}

func (d *device) GraphExecDestroy(x backend.GraphExec) error {
	if err := d.rt.GraphExecDestroy(x); err != nil {
		return err
	}
	d.graphs.init()
	graphHosts.release(d.graphs.execs[x])
	delete(d.graphs.execs, x)
	return nil
}

func (d *device) GraphUpload(x backend.GraphExec, s Stream) error { return d.rt.GraphUpload(x, s) }

func (d *device) GraphLaunch(x backend.GraphExec, s Stream) error {
	return d.rt.graphLaunch(&d.frame, x, s)
}

func (d *device) GraphLaunchN(x backend.GraphExec, s Stream, n int) (int, error) {
	return d.rt.graphLaunchN(&d.frame, x, s, n)
}

func (d *device) GraphExecKernelNodeSetParams(x backend.GraphExec, n backend.GraphNode, p backend.KernelNode) error {
	kern, err := d.kernel("cudaGraphExecKernelNodeSetParams", p.Kernel)
	if err != nil {
		return err
	}
	return d.rt.GraphExecKernelNodeSetParams(x, n, kern, p)
}

func (d *device) GraphNodeSetEnabled(x backend.GraphExec, n backend.GraphNode, enabled bool) error {
	return d.rt.GraphNodeSetEnabled(x, n, enabled)
}

func (d *device) GraphExecUpdate(x backend.GraphExec, g backend.Graph) (backend.UpdateInfo, error) {
	info, err := d.rt.GraphExecUpdate(x, g)
	if err == nil {
		d.graphs.init()
		hosts := d.graphs.execs[x]
		d.inherit(d.graphs.graphs[g], &hosts) // the old ones are kept until x goes: cheap, and safe
		d.graphs.execs[x] = hosts
	}
	return info, err
}
