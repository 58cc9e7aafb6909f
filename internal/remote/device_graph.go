package remote

import (
	"github.com/gpuactor/gpuactor/internal/backend"
)

// StreamBeginCapture starts capturing s into a graph.
func (d *Device) StreamBeginCapture(s backend.Stream, mode backend.CaptureMode) error {
	return d.void(mStreamBeginCapture, uint64(s), uint64(mode))
}

// StreamEndCapture ends s's capture and returns the graph.
func (d *Device) StreamEndCapture(s backend.Stream) (backend.Graph, error) {
	v, err := d.val(mStreamEndCapture, uint64(s))
	return backend.Graph(v), err
}

// StreamCaptureInfo describes s's capture.
func (d *Device) StreamCaptureInfo(s backend.Stream) (backend.CaptureInfo, error) {
	e := request(mStreamCaptureInfo)
	e.u64(uint64(s))
	r, err := d.do(e)
	if err != nil {
		return backend.CaptureInfo{}, err
	}
	return backend.CaptureInfo{Status: backend.CaptureStatus(r.i64()), ID: r.u64(), Graph: backend.Graph(r.u64()), Deps: r.nodes()}, r.err
}

// GraphCreate makes an empty graph.
func (d *Device) GraphCreate() (backend.Graph, error) {
	v, err := d.val(mGraphCreate)
	return backend.Graph(v), err
}

// GraphDestroy destroys a graph.
func (d *Device) GraphDestroy(g backend.Graph) error { return d.void(mGraphDestroy, uint64(g)) }

// GraphClone copies a graph.
func (d *Device) GraphClone(g backend.Graph) (backend.Graph, error) {
	v, err := d.val(mGraphClone, uint64(g))
	return backend.Graph(v), err
}

func (d *Device) nodeList(m method, g backend.Graph) ([]backend.GraphNode, error) {
	e := request(m)
	e.u64(uint64(g))
	r, err := d.do(e)
	if err != nil {
		return nil, err
	}
	ns := r.nodes()
	return ns, r.err
}

// GraphNodes lists a graph's nodes.
func (d *Device) GraphNodes(g backend.Graph) ([]backend.GraphNode, error) {
	return d.nodeList(mGraphNodes, g)
}

// GraphRootNodes lists a graph's nodes with no dependencies.
func (d *Device) GraphRootNodes(g backend.Graph) ([]backend.GraphNode, error) {
	return d.nodeList(mGraphRootNodes, g)
}

// GraphEdges lists a graph's edges.
func (d *Device) GraphEdges(g backend.Graph) (from, to []backend.GraphNode, err error) {
	e := request(mGraphEdges)
	e.u64(uint64(g))
	r, err := d.do(e)
	if err != nil {
		return nil, nil, err
	}
	from, to = r.nodes(), r.nodes()
	return from, to, r.err
}

// GraphNodeType is a node's type.
func (d *Device) GraphNodeType(n backend.GraphNode) (backend.NodeType, error) {
	v, err := d.val(mGraphNodeType, uint64(n))
	return backend.NodeType(v), err
}

// GraphAddDependencies adds edges.
func (d *Device) GraphAddDependencies(g backend.Graph, from, to []backend.GraphNode) error {
	e := request(mGraphAddDependencies)
	e.u64(uint64(g))
	e.nodes(from)
	e.nodes(to)
	_, err := d.do(e)
	return err
}

// GraphDebugDot writes the graph in DOT to path, from the worker (which shares the file
// system).
func (d *Device) GraphDebugDot(g backend.Graph, path string) error {
	e := request(mGraphDebugDot)
	e.u64(uint64(g))
	e.str(path)
	_, err := d.do(e)
	return err
}

// addNode sends a node-adding request (nodeRequest and the node's own fields) and returns the
// node.
func (d *Device) addNode(e enc) (backend.GraphNode, error) {
	r, err := d.do(e)
	if err != nil {
		return 0, err
	}
	return backend.GraphNode(r.u64()), nil
}

func nodeRequest(m method, g backend.Graph, deps []backend.GraphNode) enc {
	e := request(m)
	e.u64(uint64(g))
	e.nodes(deps)
	return e
}

// GraphAddKernelNode adds a kernel node.
func (d *Device) GraphAddKernelNode(g backend.Graph, deps []backend.GraphNode, p backend.KernelNode) (backend.GraphNode, error) {
	e := nodeRequest(mGraphAddKernelNode, g, deps)
	e.kernelNode(p)
	return d.addNode(e)
}

// GraphAddCopyDtoD adds a device-to-device copy node.
func (d *Device) GraphAddCopyDtoD(g backend.Graph, deps []backend.GraphNode, dst, src backend.DevicePtr, n uint64) (backend.GraphNode, error) {
	e := nodeRequest(mGraphAddCopyDtoD, g, deps)
	e.u64(uint64(dst))
	e.u64(uint64(src))
	e.u64(n)
	return d.addNode(e)
}

// GraphAddMemsetNode adds a memset node.
func (d *Device) GraphAddMemsetNode(g backend.Graph, deps []backend.GraphNode, p backend.DevicePtr, value byte, n uint64) (backend.GraphNode, error) {
	e := nodeRequest(mGraphAddMemsetNode, g, deps)
	e.u64(uint64(p))
	e.u64(uint64(value))
	e.u64(n)
	return d.addNode(e)
}

// GraphAddChildNode adds a child-graph node.
func (d *Device) GraphAddChildNode(g backend.Graph, deps []backend.GraphNode, child backend.Graph) (backend.GraphNode, error) {
	e := nodeRequest(mGraphAddChildNode, g, deps)
	e.u64(uint64(child))
	return d.addNode(e)
}

// GraphAddEmptyNode adds an empty node.
func (d *Device) GraphAddEmptyNode(g backend.Graph, deps []backend.GraphNode) (backend.GraphNode, error) {
	return d.addNode(nodeRequest(mGraphAddEmptyNode, g, deps))
}

// GraphAddEventRecordNode adds an event-record node.
func (d *Device) GraphAddEventRecordNode(g backend.Graph, deps []backend.GraphNode, ev backend.Event) (backend.GraphNode, error) {
	e := nodeRequest(mGraphAddEventRecordNode, g, deps)
	e.u64(uint64(ev))
	return d.addNode(e)
}

// GraphAddEventWaitNode adds an event-wait node.
func (d *Device) GraphAddEventWaitNode(g backend.Graph, deps []backend.GraphNode, ev backend.Event) (backend.GraphNode, error) {
	e := nodeRequest(mGraphAddEventWaitNode, g, deps)
	e.u64(uint64(ev))
	return d.addNode(e)
}

// GraphAddMemAllocNode adds an allocation node and returns the address it allocates.
func (d *Device) GraphAddMemAllocNode(g backend.Graph, deps []backend.GraphNode, size uint64) (backend.GraphNode, backend.DevicePtr, error) {
	e := nodeRequest(mGraphAddMemAllocNode, g, deps)
	e.u64(size)
	r, err := d.do(e)
	if err != nil {
		return 0, 0, err
	}
	return backend.GraphNode(r.u64()), backend.DevicePtr(r.u64()), r.err
}

// GraphAddMemFreeNode adds a free node.
func (d *Device) GraphAddMemFreeNode(g backend.Graph, deps []backend.GraphNode, p backend.DevicePtr) (backend.GraphNode, error) {
	e := nodeRequest(mGraphAddMemFreeNode, g, deps)
	e.u64(uint64(p))
	return d.addNode(e)
}

// GraphInstantiate instantiates a graph.
func (d *Device) GraphInstantiate(g backend.Graph, flags uint64) (backend.GraphExec, error) {
	v, err := d.val(mGraphInstantiate, uint64(g), flags)
	return backend.GraphExec(v), err
}

// GraphExecDestroy destroys an executable graph.
func (d *Device) GraphExecDestroy(x backend.GraphExec) error {
	return d.void(mGraphExecDestroy, uint64(x))
}

// GraphUpload queues an executable graph's upload on s.
func (d *Device) GraphUpload(x backend.GraphExec, s backend.Stream) error {
	return d.void(mGraphUpload, uint64(x), uint64(s))
}

// GraphLaunch queues an executable graph on s.
func (d *Device) GraphLaunch(x backend.GraphExec, s backend.Stream) error {
	return d.postVoid(mGraphLaunch, s, uint64(x), uint64(s))
}

// GraphLaunchN queues n launches of an executable graph on s and returns how many were queued.
func (d *Device) GraphLaunchN(x backend.GraphExec, s backend.Stream, n int) (int, error) {
	e := request(mGraphLaunchN)
	e.u64(uint64(x))
	e.u64(uint64(s))
	e.i64(int64(n))
	r, rerr := d.b.call(e)
	if rerr != nil {
		return 0, rerr
	}
	// The worker answers the count and the error together: some may have been queued.
	k := r.int()
	code := r.i64()
	msg := r.str()
	if code != 0 {
		return k, Codec{}.Decode(code, msg)
	}
	return k, r.err
}

// GraphExecKernelNodeSetParams changes a kernel node's parameters in an executable graph.
func (d *Device) GraphExecKernelNodeSetParams(x backend.GraphExec, n backend.GraphNode, p backend.KernelNode) error {
	e := request(mGraphExecKernelNodeSetParams)
	e.u64(uint64(x))
	e.u64(uint64(n))
	e.kernelNode(p)
	_, err := d.do(e)
	return err
}

// GraphNodeSetEnabled enables or disables a node of an executable graph.
func (d *Device) GraphNodeSetEnabled(x backend.GraphExec, n backend.GraphNode, enabled bool) error {
	var v uint64
	if enabled {
		v = 1
	}
	return d.void(mGraphNodeSetEnabled, uint64(x), uint64(n), v)
}

// GraphExecUpdate updates an executable graph from g; the UpdateInfo comes back with the error.
func (d *Device) GraphExecUpdate(x backend.GraphExec, g backend.Graph) (backend.UpdateInfo, error) {
	e := request(mGraphExecUpdate)
	e.u64(uint64(x))
	e.u64(uint64(g))
	r, err := d.b.call(e)
	if err != nil {
		return backend.UpdateInfo{}, err
	}
	info := backend.UpdateInfo{Result: backend.UpdateResult(r.i64()), ErrorNode: backend.GraphNode(r.u64()), FromNode: backend.GraphNode(r.u64())}
	code := r.i64()
	msg := r.str()
	if code != 0 {
		return info, Codec{}.Decode(code, msg)
	}
	return info, r.err
}
