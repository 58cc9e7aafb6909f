package cudart

import (
	"fmt"
	"runtime"
	"structs"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// Graph and stream-capture calls. Where a signature changed between versions (binding-notes
// B.2) the form is picked by Major: capture info, edges and dependencies gained edge data in
// 12.3 (as _v2/_v3 names) and 13.0 gave those forms the plain names; cudaGraphExecUpdate takes
// a result-info struct from 12.0 on. cudaGraphInstantiateWithFlags is the same everywhere.

// nodeList is the address of a node array's first element (0 when empty).
// The slices come through the backend.Device interface, so they live on the heap, which does
// not move.
func nodeList(n []backend.GraphNode) uintptr {
	if len(n) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&n[0]))
}

// StreamBeginCapture starts capturing s (cudaStreamBeginCapture).
func (r *Runtime) StreamBeginCapture(s Stream, mode backend.CaptureMode) error {
	return r.call(fnStreamBeginCapture, uintptr(s), uintptr(mode))
}

// StreamEndCapture ends the capture on s and returns its graph (cudaStreamEndCapture).
func (r *Runtime) StreamEndCapture(s Stream) (backend.Graph, error) {
	var g uintptr
	err := r.call(fnStreamEndCapture, uintptr(s), uintptr(unsafe.Pointer(&g)))
	return backend.Graph(g), err
}

// StreamCaptureInfo reports s's capture state: cudaStreamGetCaptureInfo (13.0, seven
// arguments) or cudaStreamGetCaptureInfo_v2 (11.3–12.x, six). The dependency array belongs
// to the runtime and is copied at once.
func (r *Runtime) StreamCaptureInfo(s Stream) (backend.CaptureInfo, error) {
	var (
		status int32
		id     uint64
		g      uintptr
		deps   uintptr
		edges  uintptr
		n      uintptr
	)
	var err error
	if r.major >= 13 {
		err = r.call(fnStreamGetCaptureInfo, uintptr(s), uintptr(unsafe.Pointer(&status)), uintptr(unsafe.Pointer(&id)),
			uintptr(unsafe.Pointer(&g)), uintptr(unsafe.Pointer(&deps)), uintptr(unsafe.Pointer(&edges)), uintptr(unsafe.Pointer(&n)))
	} else {
		err = r.call(fnStreamGetCaptureInfoV2, uintptr(s), uintptr(unsafe.Pointer(&status)), uintptr(unsafe.Pointer(&id)),
			uintptr(unsafe.Pointer(&g)), uintptr(unsafe.Pointer(&deps)), uintptr(unsafe.Pointer(&n)))
	}
	if err != nil {
		return backend.CaptureInfo{}, err
	}
	info := backend.CaptureInfo{Status: backend.CaptureStatus(status), ID: id, Graph: backend.Graph(g)}
	if info.Status == backend.CaptureActive && deps != 0 && n > 0 {
		info.Deps = make([]backend.GraphNode, n)
		base := *(*unsafe.Pointer)(unsafe.Pointer(&deps)) // C memory: reinterpreted, as gostring does
		copy(info.Deps, unsafe.Slice((*backend.GraphNode)(base), n))
	}
	return info, nil
}

// GraphCreate makes an empty graph (cudaGraphCreate).
func (r *Runtime) GraphCreate() (backend.Graph, error) {
	var g uintptr
	err := r.call(fnGraphCreate, uintptr(unsafe.Pointer(&g)), 0)
	return backend.Graph(g), err
}

// GraphDestroy destroys a graph (cudaGraphDestroy).
func (r *Runtime) GraphDestroy(g backend.Graph) error { return r.call(fnGraphDestroy, uintptr(g)) }

// GraphClone copies a graph (cudaGraphClone).
func (r *Runtime) GraphClone(g backend.Graph) (backend.Graph, error) {
	var c uintptr
	err := r.call(fnGraphClone, uintptr(unsafe.Pointer(&c)), uintptr(g))
	return backend.Graph(c), err
}

// graphNodeList calls a (graph, nodes*, size_t*) lister twice: for the count, then the nodes.
func (r *Runtime) graphNodeList(id int, g backend.Graph) ([]backend.GraphNode, error) {
	var n uintptr
	if err := r.call(id, uintptr(g), 0, uintptr(unsafe.Pointer(&n))); err != nil || n == 0 {
		return nil, err
	}
	out := make([]backend.GraphNode, n)
	if err := r.call(id, uintptr(g), uintptr(unsafe.Pointer(&out[0])), uintptr(unsafe.Pointer(&n))); err != nil {
		return nil, err
	}
	return out[:min(int(n), len(out))], nil
}

// GraphNodes lists g's nodes (cudaGraphGetNodes).
func (r *Runtime) GraphNodes(g backend.Graph) ([]backend.GraphNode, error) {
	return r.graphNodeList(fnGraphGetNodes, g)
}

// GraphRootNodes lists g's root nodes (cudaGraphGetRootNodes).
func (r *Runtime) GraphRootNodes(g backend.Graph) ([]backend.GraphNode, error) {
	return r.graphNodeList(fnGraphGetRootNodes, g)
}

// GraphEdges lists g's edges (cudaGraphGetEdges: 13.0 takes an edge-data array, which may be
// NULL; earlier versions have no such parameter).
func (r *Runtime) GraphEdges(g backend.Graph) (from, to []backend.GraphNode, err error) {
	n := new(uintptr)
	if err := r.graphEdges(g, nil, nil, n); err != nil || *n == 0 {
		return nil, nil, err
	}
	from, to = make([]backend.GraphNode, *n), make([]backend.GraphNode, *n)
	if err := r.graphEdges(g, from, to, n); err != nil {
		return nil, nil, err
	}
	k := min(int(*n), len(from))
	return from[:k], to[:k], nil
}

// graphEdges is one cudaGraphGetEdges call: the count into n when from and to are nil, else
// the edges into them.
func (r *Runtime) graphEdges(g backend.Graph, from, to []backend.GraphNode, n *uintptr) error {
	var f, t *backend.GraphNode
	if len(from) > 0 {
		f, t = &from[0], &to[0]
	}
	if r.major >= 13 {
		return r.call(fnGraphGetEdges, uintptr(g), uintptr(unsafe.Pointer(f)), uintptr(unsafe.Pointer(t)), 0, uintptr(unsafe.Pointer(n)))
	}
	return r.call(fnGraphGetEdges, uintptr(g), uintptr(unsafe.Pointer(f)), uintptr(unsafe.Pointer(t)), uintptr(unsafe.Pointer(n)))
}

// GraphNodeType is a node's type (cudaGraphNodeGetType).
func (r *Runtime) GraphNodeType(n backend.GraphNode) (backend.NodeType, error) {
	var t int32
	err := r.call(fnGraphNodeGetType, uintptr(n), uintptr(unsafe.Pointer(&t)))
	return backend.NodeType(t), err
}

// GraphAddDependencies adds edges (cudaGraphAddDependencies; 13.0 takes edge data, NULL for
// ordinary edges).
func (r *Runtime) GraphAddDependencies(g backend.Graph, from, to []backend.GraphNode) error {
	if len(from) != len(to) || len(from) == 0 {
		return r.newError("cudaGraphAddDependencies", codeInvalidValue)
	}
	var err error
	if r.major >= 13 {
		err = r.call(fnGraphAddDependencies, uintptr(g), nodeList(from), nodeList(to), 0, uintptr(len(from)))
	} else {
		err = r.call(fnGraphAddDependencies, uintptr(g), nodeList(from), nodeList(to), uintptr(len(from)))
	}
	runtime.KeepAlive(from)
	runtime.KeepAlive(to)
	return err
}

// GraphDebugDot writes g as DOT to path (cudaGraphDebugDotPrint, verbose).
func (r *Runtime) GraphDebugDot(g backend.Graph, path string) error {
	const verbose = 1
	return r.call(fnGraphDebugDotPrint, uintptr(g), uintptr(unsafe.Pointer(cstr(path))), verbose)
}

// addNode calls a cudaGraphAdd*Node whose arguments after (node*, graph, deps, n) are rest.
//
//go:uintptrescapes
func (r *Runtime) addNode(id int, g backend.Graph, deps []backend.GraphNode, rest ...uintptr) (backend.GraphNode, error) {
	// uintptrescapes: the node parameters callers convert in their call expressions are moved
	// to the heap and kept there; node is converted inside call's expression for the same
	// reason. A struct converted to a uintptr elsewhere may live on the goroutine's stack,
	// which can move before the runtime writes into it (as an allocation node's address).
	if len(rest) > 4 {
		return 0, fmt.Errorf("gpuactor/cudart: %s given %d parameter words, at most 4", runtimeSymNames[id], len(rest))
	}
	var w [4]uintptr
	copy(w[:], rest)
	node := new(uintptr)
	err := r.call(id, uintptr(unsafe.Pointer(node)), uintptr(g), nodeList(deps), uintptr(len(deps)), w[0], w[1], w[2], w[3])
	runtime.KeepAlive(deps)
	return backend.GraphNode(*node), err
}

// GraphAddMemcpyNode1D adds a 1D copy node (cudaGraphAddMemcpyNode1D). dst and src are
// device addresses or pinned host memory that outlives the graph.
func (r *Runtime) GraphAddMemcpyNode1D(g backend.Graph, deps []backend.GraphNode, dst, src uintptr, n uint64, kind MemcpyKind) (backend.GraphNode, error) {
	return r.addNode(fnGraphAddMemcpyNode1D, g, deps, dst, src, uintptr(n), uintptr(kind))
}

// memsetParams is cudaMemsetParams (40 bytes).
type memsetParams struct {
	_           structs.HostLayout
	dst         uintptr
	pitch       uintptr
	value       uint32
	elementSize uint32
	width       uintptr
	height      uintptr
}

// GraphAddMemsetNode adds a byte memset node (cudaGraphAddMemsetNode).
func (r *Runtime) GraphAddMemsetNode(g backend.Graph, deps []backend.GraphNode, p DevicePtr, value byte, n uint64) (backend.GraphNode, error) {
	prm := &memsetParams{dst: uintptr(p), value: uint32(value), elementSize: 1, width: uintptr(n), height: 1}
	node, err := r.addNode(fnGraphAddMemsetNode, g, deps, uintptr(unsafe.Pointer(prm)))
	runtime.KeepAlive(prm)
	return node, err
}

// hostNodeParams is cudaHostNodeParams.
type hostNodeParams struct {
	_        structs.HostLayout
	fn       uintptr
	userData uintptr
}

// GraphAddHostNode adds a host node calling the shared trampoline with userData
// (cudaGraphAddHostNode).
func (r *Runtime) GraphAddHostNode(g backend.Graph, deps []backend.GraphNode, userData uintptr) (backend.GraphNode, error) {
	prm := &hostNodeParams{fn: hostFuncTrampoline(), userData: userData}
	node, err := r.addNode(fnGraphAddHostNode, g, deps, uintptr(unsafe.Pointer(prm)))
	runtime.KeepAlive(prm)
	return node, err
}

// GraphAddChildNode adds a copy of child (cudaGraphAddChildGraphNode).
func (r *Runtime) GraphAddChildNode(g backend.Graph, deps []backend.GraphNode, child backend.Graph) (backend.GraphNode, error) {
	return r.addNode(fnGraphAddChildGraphNode, g, deps, uintptr(child))
}

// GraphAddEmptyNode adds an empty node (cudaGraphAddEmptyNode).
func (r *Runtime) GraphAddEmptyNode(g backend.Graph, deps []backend.GraphNode) (backend.GraphNode, error) {
	return r.addNode(fnGraphAddEmptyNode, g, deps)
}

// GraphAddEventRecordNode adds an event record node (cudaGraphAddEventRecordNode).
func (r *Runtime) GraphAddEventRecordNode(g backend.Graph, deps []backend.GraphNode, e Event) (backend.GraphNode, error) {
	return r.addNode(fnGraphAddEventRecordNode, g, deps, uintptr(e))
}

// GraphAddEventWaitNode adds an event wait node (cudaGraphAddEventWaitNode).
func (r *Runtime) GraphAddEventWaitNode(g backend.Graph, deps []backend.GraphNode, e Event) (backend.GraphNode, error) {
	return r.addNode(fnGraphAddEventWaitNode, g, deps, uintptr(e))
}

// memAllocNodeParams is cudaMemAllocNodeParams (120 bytes: an 88-byte cudaMemPoolProps, the
// access descriptors, the size, and the address the runtime returns).
type memAllocNodeParams struct {
	_               structs.HostLayout
	allocType       int32 // cudaMemAllocationTypePinned = 1
	handleTypes     int32 // none
	locType         int32 // cudaMemLocationTypeDevice = 1
	locID           int32
	win32Security   uintptr
	maxSize         uintptr
	usage           uint16
	reserved        [54]byte
	accessDescs     uintptr
	accessDescCount uintptr
	bytesize        uintptr
	dptr            uintptr
}

// GraphAddMemAllocNode adds an allocation node on device ordinal (cudaGraphAddMemAllocNode).
func (r *Runtime) GraphAddMemAllocNode(g backend.Graph, deps []backend.GraphNode, ordinal int, size uint64) (backend.GraphNode, DevicePtr, error) {
	prm := &memAllocNodeParams{allocType: 1, locType: 1, locID: int32(ordinal), bytesize: uintptr(size)}
	node, err := r.addNode(fnGraphAddMemAllocNode, g, deps, uintptr(unsafe.Pointer(prm)))
	p := DevicePtr(prm.dptr)
	runtime.KeepAlive(prm)
	return node, p, err
}

// GraphAddMemFreeNode adds a free node (cudaGraphAddMemFreeNode).
func (r *Runtime) GraphAddMemFreeNode(g backend.Graph, deps []backend.GraphNode, p DevicePtr) (backend.GraphNode, error) {
	return r.addNode(fnGraphAddMemFreeNode, g, deps, uintptr(p))
}

// GraphInstantiate makes an executable graph (cudaGraphInstantiateWithFlags).
func (r *Runtime) GraphInstantiate(g backend.Graph, flags uint64) (backend.GraphExec, error) {
	var x uintptr
	err := r.call(fnGraphInstantiateWithFlags, uintptr(unsafe.Pointer(&x)), uintptr(g), uintptr(flags))
	return backend.GraphExec(x), err
}

// GraphExecDestroy destroys an executable graph (cudaGraphExecDestroy).
func (r *Runtime) GraphExecDestroy(x backend.GraphExec) error {
	return r.call(fnGraphExecDestroy, uintptr(x))
}

// GraphUpload uploads x on s (cudaGraphUpload).
func (r *Runtime) GraphUpload(x backend.GraphExec, s Stream) error {
	return r.call(fnGraphUpload, uintptr(x), uintptr(s))
}

// graphLaunch enqueues x on s (cudaGraphLaunch) on a caller's frame: a hot call.
func (r *Runtime) graphLaunch(f *callFrame, x backend.GraphExec, s Stream) error {
	f.w[0], f.w[1] = uintptr(x), uintptr(s)
	return r.invokeErr(fnGraphLaunch, f)
}

// graphLaunchN enqueues n runs of x on s from one crossing into C (ffiRepeat), and returns
// how many were queued before the first the runtime refused, with its error: a hot call.
func (r *Runtime) graphLaunchN(f *callFrame, x backend.GraphExec, s Stream, n int) (int, error) {
	fn, err := r.syms.get(fnGraphLaunch)
	if err != nil {
		return 0, err
	}
	f.fn = fn
	f.w[0], f.w[1] = uintptr(x), uintptr(s)
	done, code := ffiRepeat(f, n)
	if int32(code) == 0 {
		return done, nil
	}
	return done, r.newError(runtimeSymNames[fnGraphLaunch], int32(code))
}

// GraphNodeSetEnabled enables or disables a node of x (cudaGraphNodeSetEnabled).
func (r *Runtime) GraphNodeSetEnabled(x backend.GraphExec, n backend.GraphNode, enabled bool) error {
	on := uintptr(0)
	if enabled {
		on = 1
	}
	return r.call(fnGraphNodeSetEnabled, uintptr(x), uintptr(n), on)
}

// updateResultInfo is cudaGraphExecUpdateResultInfo (12.0+).
type updateResultInfo struct {
	_         structs.HostLayout
	result    int32
	errorNode uintptr
	errorFrom uintptr
}

// GraphExecUpdate updates x from g (cudaGraphExecUpdate: the result-info form from 12.0 on,
// the (errorNode*, result*) form on 11.x).
func (r *Runtime) GraphExecUpdate(x backend.GraphExec, g backend.Graph) (backend.UpdateInfo, error) {
	if r.major >= 12 {
		info := &updateResultInfo{}
		err := r.call(fnGraphExecUpdate, uintptr(x), uintptr(g), uintptr(unsafe.Pointer(info)))
		out := backend.UpdateInfo{Result: backend.UpdateResult(info.result), ErrorNode: backend.GraphNode(info.errorNode),
			FromNode: backend.GraphNode(info.errorFrom)}
		runtime.KeepAlive(info)
		return out, err
	}
	var node uintptr
	var result int32
	err := r.call(fnGraphExecUpdate, uintptr(x), uintptr(g), uintptr(unsafe.Pointer(&node)), uintptr(unsafe.Pointer(&result)))
	return backend.UpdateInfo{Result: backend.UpdateResult(result), ErrorNode: backend.GraphNode(node)}, err
}
