package cudart

import (
	"runtime"
	"structs"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// graphNodeParams is cudaGraphNodeParams (12.3+, 256 bytes): the node type, 12 reserved bytes,
// a 232-byte union of the per-kind parameter structs at offset 16, and 8 reserved bytes.
type graphNodeParams struct {
	_         structs.HostLayout
	typ       int32
	reserved0 [3]int32
	union     [29]uint64
	reserved2 int64
}

// memsetParamsV2 is cudaMemsetParamsV2 (40 bytes), as the union holds it.
type memsetParamsV2 struct {
	_           structs.HostLayout
	dst         uintptr
	pitch       uint64
	value       uint32
	elementSize uint32
	width       uint64
	height      uint64
}

// conditionalParams is cudaConditionalNodeParams (24 bytes), as the union holds it:
// phGraph_out points at an array of the node's body graphs that the runtime fills and owns.
type conditionalParams struct {
	_          structs.HostLayout
	handle     uint64
	typ        int32
	size       uint32
	phGraphOut unsafe.Pointer // cudaGraph_t*: the runtime's array of body graphs
}

// kernelParamsV2 is cudaKernelNodeParamsV2 (56 bytes): the first 56 bytes of kernelNodeParams.
const kernelParamsV2Size = 56

func (p *graphNodeParams) data() unsafe.Pointer { return unsafe.Pointer(&p.union[0]) }

// nodeParams packs p for the runtime's generic calls. For a kernel it keeps the packed
// arguments referenced from keep, which must stay alive across the call. A kernel node names
// the kernel by its cudaKernel_t (Kernel.Handle), which the runtime accepts as the function.
func nodeParams(k Kernel, p backend.NodeParams) (prm *graphNodeParams, keep any) {
	prm = &graphNodeParams{typ: int32(p.Type)}
	switch p.Type {
	case backend.NodeKernel:
		kp := kernelNode(k, p.Kernel)
		kp.fn = k.Handle
		copy(unsafe.Slice((*byte)(prm.data()), kernelParamsV2Size), unsafe.Slice((*byte)(unsafe.Pointer(kp)), kernelParamsV2Size))
		keep = kp
	case backend.NodeMemset:
		m := p.Memset
		*(*memsetParamsV2)(prm.data()) = memsetParamsV2{dst: uintptr(m.Dst), pitch: m.Pitch, value: m.Value,
			elementSize: m.ElementSize, width: m.Width, height: m.Height}
	case backend.NodeConditional:
		*(*conditionalParams)(prm.data()) = conditionalParams{handle: uint64(p.Conditional.Handle),
			typ: int32(p.Conditional.Type), size: p.Conditional.Size}
	}
	return prm, keep
}

// GraphConditionalHandleCreate makes a conditional variable of g
// (cudaGraphConditionalHandleCreate, 12.3+).
func (r *Runtime) GraphConditionalHandleCreate(g backend.Graph, def, flags uint32) (backend.ConditionalHandle, error) {
	var h uint64
	err := r.call(fnGraphConditionalHandleCreate, uintptr(unsafe.Pointer(&h)), uintptr(g), uintptr(def), uintptr(flags))
	return backend.ConditionalHandle(h), err
}

// GraphAddNode adds a node through cudaGraphAddNode: 13.0 takes an edge-data array after the
// dependencies (NULL: plain edges), 12.3–12.x do not. A conditional node's body graphs are
// read from the array the runtime filled, which it owns.
func (r *Runtime) GraphAddNode(g backend.Graph, deps []backend.GraphNode, k Kernel, p backend.NodeParams) (backend.GraphNode, []backend.Graph, error) {
	prm, keep := nodeParams(k, p)
	var node uintptr
	var err error
	if r.major >= 13 {
		err = r.call(fnGraphAddNode, uintptr(unsafe.Pointer(&node)), uintptr(g), nodeList(deps), 0, uintptr(len(deps)), uintptr(unsafe.Pointer(prm)))
	} else {
		err = r.call(fnGraphAddNode, uintptr(unsafe.Pointer(&node)), uintptr(g), nodeList(deps), uintptr(len(deps)), uintptr(unsafe.Pointer(prm)))
	}
	runtime.KeepAlive(deps)
	runtime.KeepAlive(keep)
	if err != nil {
		return 0, nil, err
	}
	var bodies []backend.Graph
	if p.Type == backend.NodeConditional {
		c := (*conditionalParams)(prm.data())
		if c.phGraphOut != nil && c.size > 0 {
			out := unsafe.Slice((*backend.Graph)(c.phGraphOut), c.size)
			bodies = append(bodies, out...)
		}
	}
	runtime.KeepAlive(prm)
	return backend.GraphNode(node), bodies, nil
}

// GraphNodeSetParams changes a node's parameters (cudaGraphNodeSetParams, 12.3+).
func (r *Runtime) GraphNodeSetParams(n backend.GraphNode, k Kernel, p backend.NodeParams) error {
	prm, keep := nodeParams(k, p)
	err := r.call(fnGraphNodeSetParams, uintptr(n), uintptr(unsafe.Pointer(prm)))
	runtime.KeepAlive(prm)
	runtime.KeepAlive(keep)
	return err
}

// GraphExecNodeSetParams changes a node's parameters in x (cudaGraphExecNodeSetParams, 12.3+).
func (r *Runtime) GraphExecNodeSetParams(x backend.GraphExec, n backend.GraphNode, k Kernel, p backend.NodeParams) error {
	prm, keep := nodeParams(k, p)
	err := r.call(fnGraphExecNodeSetParams, uintptr(x), uintptr(n), uintptr(unsafe.Pointer(prm)))
	runtime.KeepAlive(prm)
	runtime.KeepAlive(keep)
	return err
}

// StreamBeginCaptureToGraph starts capturing s into g after deps
// (cudaStreamBeginCaptureToGraph, 12.3+; NULL edge data: plain edges).
func (r *Runtime) StreamBeginCaptureToGraph(s Stream, g backend.Graph, deps []backend.GraphNode, mode backend.CaptureMode) error {
	err := r.call(fnStreamBeginCaptureToGraph, uintptr(s), uintptr(g), nodeList(deps), 0, uintptr(len(deps)), uintptr(mode))
	runtime.KeepAlive(deps)
	return err
}
