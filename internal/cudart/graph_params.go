package cudart

import (
	"runtime"
	"unsafe"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Per-kind graph node parameters: cudaGraph*NodeGetParams/SetParams, the event and child
// accessors, and cudaGraphExec*NodeSetParams. The structs are those of graph.go
// (memsetParams, hostNodeParams, memAllocNodeParams) and memcpy3d.go (Memcpy3DParms),
// laid out as the 11.4 to 13.0 headers lay them out; none of these signatures changed
// between those versions.

// GraphKernelNodeSetParams changes a kernel node, through the API that added kernels like k
// (see GraphAddKernelNode): cuGraphKernelNodeSetParams for a kernel with a CUfunction, else
// cudaGraphKernelNodeSetParams. The runtime copies the arguments during the call.
func (r *Runtime) GraphKernelNodeSetParams(n backend.GraphNode, k Kernel, p backend.KernelNode) error {
	prm := kernelNode(k, p)
	var err error
	if k.Func != 0 {
		err = r.driverCall(drvGraphKernelNodeSetParams, uintptr(n), uintptr(unsafe.Pointer(prm)))
	} else {
		err = r.call(fnGraphKernelNodeSetParams, uintptr(n), uintptr(unsafe.Pointer(prm)))
	}
	runtime.KeepAlive(prm)
	return err
}

// GraphMemcpyNodeGetParams reads a copy node's cudaMemcpy3DParms (cudaGraphMemcpyNodeGetParams).
func (r *Runtime) GraphMemcpyNodeGetParams(n backend.GraphNode) (Memcpy3DParms, error) {
	prm := new(Memcpy3DParms)
	err := r.call(fnGraphMemcpyNodeGetParams, uintptr(n), uintptr(unsafe.Pointer(prm)))
	return *prm, err
}

// copy1D is the 1D copy p describes: one row of linear memory on each side, no arrays.
func copy1D(p Memcpy3DParms) (backend.CopyNode, error) {
	if p.SrcArray != 0 || p.DstArray != 0 || p.Extent.Height > 1 || p.Extent.Depth > 1 {
		return backend.CopyNode{}, &cudaerr.Error{Op: "cudaGraphMemcpyNodeGetParams", Code: cudaerr.NotSupported,
			Message: "the copy node is not a 1D copy of linear memory (an array or 3D copy)"}
	}
	src := uint64(p.SrcPtr.Ptr) + p.SrcPos.X + p.SrcPos.Y*p.SrcPtr.Pitch
	dst := uint64(p.DstPtr.Ptr) + p.DstPos.X + p.DstPos.Y*p.DstPtr.Pitch
	return backend.CopyNode{Dst: dst, Src: src, Bytes: p.Extent.Width, Kind: backend.CopyKind(p.Kind)}, nil
}

// GraphMemcpyNodeSetParams1D makes a copy node a 1D copy (cudaGraphMemcpyNodeSetParams1D).
func (r *Runtime) GraphMemcpyNodeSetParams1D(n backend.GraphNode, dst, src uintptr, count uint64, kind MemcpyKind) error {
	return r.call(fnGraphMemcpyNodeSetParams1D, uintptr(n), dst, src, uintptr(count), uintptr(kind))
}

// GraphExecMemcpyNodeSetParams1D makes a copy node of x a 1D copy
// (cudaGraphExecMemcpyNodeSetParams1D).
func (r *Runtime) GraphExecMemcpyNodeSetParams1D(x backend.GraphExec, n backend.GraphNode, dst, src uintptr, count uint64, kind MemcpyKind) error {
	return r.call(fnGraphExecMemcpyNodeSetParams1D, uintptr(x), uintptr(n), dst, src, uintptr(count), uintptr(kind))
}

func toMemsetParams(p backend.MemsetNode) *memsetParams {
	return &memsetParams{dst: uintptr(p.Dst), pitch: uintptr(p.Pitch), value: p.Value, elementSize: p.ElementSize,
		width: uintptr(p.Width), height: uintptr(p.Height)}
}

// GraphMemsetNodeGetParams reads a memset node (cudaGraphMemsetNodeGetParams).
func (r *Runtime) GraphMemsetNodeGetParams(n backend.GraphNode) (backend.MemsetNode, error) {
	prm := new(memsetParams)
	err := r.call(fnGraphMemsetNodeGetParams, uintptr(n), uintptr(unsafe.Pointer(prm)))
	return backend.MemsetNode{Dst: DevicePtr(prm.dst), Pitch: uint64(prm.pitch), Value: prm.value, ElementSize: prm.elementSize,
		Width: uint64(prm.width), Height: uint64(prm.height)}, err
}

// GraphMemsetNodeSetParams changes a memset node (cudaGraphMemsetNodeSetParams).
func (r *Runtime) GraphMemsetNodeSetParams(n backend.GraphNode, p backend.MemsetNode) error {
	prm := toMemsetParams(p)
	err := r.call(fnGraphMemsetNodeSetParams, uintptr(n), uintptr(unsafe.Pointer(prm)))
	runtime.KeepAlive(prm)
	return err
}

// GraphExecMemsetNodeSetParams changes a memset node of x (cudaGraphExecMemsetNodeSetParams).
func (r *Runtime) GraphExecMemsetNodeSetParams(x backend.GraphExec, n backend.GraphNode, p backend.MemsetNode) error {
	prm := toMemsetParams(p)
	err := r.call(fnGraphExecMemsetNodeSetParams, uintptr(x), uintptr(n), uintptr(unsafe.Pointer(prm)))
	runtime.KeepAlive(prm)
	return err
}

// GraphHostNodeUserData is the userData word of a host node (cudaGraphHostNodeGetParams).
func (r *Runtime) GraphHostNodeUserData(n backend.GraphNode) (uintptr, error) {
	prm := new(hostNodeParams)
	err := r.call(fnGraphHostNodeGetParams, uintptr(n), uintptr(unsafe.Pointer(prm)))
	return prm.userData, err
}

// GraphHostNodeSetParams makes a host node call the shared trampoline with userData
// (cudaGraphHostNodeSetParams).
func (r *Runtime) GraphHostNodeSetParams(n backend.GraphNode, userData uintptr) error {
	prm := &hostNodeParams{fn: hostFuncTrampoline(), userData: userData}
	err := r.call(fnGraphHostNodeSetParams, uintptr(n), uintptr(unsafe.Pointer(prm)))
	runtime.KeepAlive(prm)
	return err
}

// GraphExecHostNodeSetParams makes a host node of x call the trampoline with userData
// (cudaGraphExecHostNodeSetParams).
func (r *Runtime) GraphExecHostNodeSetParams(x backend.GraphExec, n backend.GraphNode, userData uintptr) error {
	prm := &hostNodeParams{fn: hostFuncTrampoline(), userData: userData}
	err := r.call(fnGraphExecHostNodeSetParams, uintptr(x), uintptr(n), uintptr(unsafe.Pointer(prm)))
	runtime.KeepAlive(prm)
	return err
}

// GraphChildGraphNodeGetGraph is the graph a child node embeds (cudaGraphChildGraphNodeGetGraph).
func (r *Runtime) GraphChildGraphNodeGetGraph(n backend.GraphNode) (backend.Graph, error) {
	g := new(uintptr)
	err := r.call(fnGraphChildGraphNodeGetGraph, uintptr(n), uintptr(unsafe.Pointer(g)))
	return backend.Graph(*g), err
}

// GraphExecChildGraphNodeSetParams takes child's parameters into a child node of x
// (cudaGraphExecChildGraphNodeSetParams).
func (r *Runtime) GraphExecChildGraphNodeSetParams(x backend.GraphExec, n backend.GraphNode, child backend.Graph) error {
	return r.call(fnGraphExecChildGraphNodeSetParams, uintptr(x), uintptr(n), uintptr(child))
}

// nodeEvent reads the event of a record or wait node through fn.
func (r *Runtime) nodeEvent(fn int, n backend.GraphNode) (Event, error) {
	e := new(uintptr)
	err := r.call(fn, uintptr(n), uintptr(unsafe.Pointer(e)))
	return Event(*e), err
}

// GraphEventRecordNodeGetEvent (cudaGraphEventRecordNodeGetEvent).
func (r *Runtime) GraphEventRecordNodeGetEvent(n backend.GraphNode) (Event, error) {
	return r.nodeEvent(fnGraphEventRecordNodeGetEvent, n)
}

// GraphEventRecordNodeSetEvent (cudaGraphEventRecordNodeSetEvent).
func (r *Runtime) GraphEventRecordNodeSetEvent(n backend.GraphNode, e Event) error {
	return r.call(fnGraphEventRecordNodeSetEvent, uintptr(n), uintptr(e))
}

// GraphEventWaitNodeGetEvent (cudaGraphEventWaitNodeGetEvent).
func (r *Runtime) GraphEventWaitNodeGetEvent(n backend.GraphNode) (Event, error) {
	return r.nodeEvent(fnGraphEventWaitNodeGetEvent, n)
}

// GraphEventWaitNodeSetEvent (cudaGraphEventWaitNodeSetEvent).
func (r *Runtime) GraphEventWaitNodeSetEvent(n backend.GraphNode, e Event) error {
	return r.call(fnGraphEventWaitNodeSetEvent, uintptr(n), uintptr(e))
}

// GraphExecEventRecordNodeSetEvent (cudaGraphExecEventRecordNodeSetEvent).
func (r *Runtime) GraphExecEventRecordNodeSetEvent(x backend.GraphExec, n backend.GraphNode, e Event) error {
	return r.call(fnGraphExecEventRecordNodeSetEvent, uintptr(x), uintptr(n), uintptr(e))
}

// GraphExecEventWaitNodeSetEvent (cudaGraphExecEventWaitNodeSetEvent).
func (r *Runtime) GraphExecEventWaitNodeSetEvent(x backend.GraphExec, n backend.GraphNode, e Event) error {
	return r.call(fnGraphExecEventWaitNodeSetEvent, uintptr(x), uintptr(n), uintptr(e))
}

// GraphMemAllocNodeGetParams reads a mem-alloc node (cudaGraphMemAllocNodeGetParams). The
// access descriptors it points at are the runtime's and are not read.
func (r *Runtime) GraphMemAllocNodeGetParams(n backend.GraphNode) (backend.AllocNode, error) {
	prm := new(memAllocNodeParams)
	err := r.call(fnGraphMemAllocNodeGetParams, uintptr(n), uintptr(unsafe.Pointer(prm)))
	return backend.AllocNode{Ptr: DevicePtr(prm.dptr), Bytes: uint64(prm.bytesize), Device: int(prm.locID)}, err
}

// GraphMemFreeNodeGetParams is the address a free node frees (cudaGraphMemFreeNodeGetParams
// writes it through its void* argument).
func (r *Runtime) GraphMemFreeNodeGetParams(n backend.GraphNode) (DevicePtr, error) {
	p := new(uintptr)
	err := r.call(fnGraphMemFreeNodeGetParams, uintptr(n), uintptr(unsafe.Pointer(p)))
	return DevicePtr(*p), err
}

// GraphKernelNodeGetAttrs reads a kernel node's launch attributes, one
// cudaGraphKernelNodeGetAttribute each, decoding the 64-byte value union as launchFrame.set
// encodes it. Programmatic serialization is not read: the runtime refuses it on a node.
func (r *Runtime) GraphKernelNodeGetAttrs(n backend.GraphNode) (backend.LaunchAttrs, error) {
	var a backend.LaunchAttrs
	val := new([8]uint64)
	for _, id := range []uint32{launchAttrCooperative, launchAttrClusterDimension, launchAttrClusterSchedulingPolicy,
		launchAttrPriority, launchAttrMemSyncDomain} {
		*val = [8]uint64{}
		if err := r.call(fnGraphKernelNodeGetAttribute, uintptr(n), uintptr(id), uintptr(unsafe.Pointer(val))); err != nil {
			return backend.LaunchAttrs{}, err
		}
		w0 := val[0]
		switch id {
		case launchAttrCooperative:
			a.Cooperative = uint32(w0) != 0
		case launchAttrClusterDimension:
			a.Cluster = Dim3{X: uint32(w0), Y: uint32(w0 >> 32), Z: uint32(val[1])}
		case launchAttrClusterSchedulingPolicy:
			a.ClusterScheduling = uint8(w0)
		case launchAttrPriority:
			a.Priority = int32(uint32(w0))
		case launchAttrMemSyncDomain:
			a.MemSyncDomain = uint8(w0)
		}
	}
	return a, nil
}

// GraphKernelNodeCopyAttributes copies src's launch attributes to dst
// (cudaGraphKernelNodeCopyAttributes, whose parameters 13.0 swapped to (dst, src)).
func (r *Runtime) GraphKernelNodeCopyAttributes(dst, src backend.GraphNode) error {
	if r.major >= 13 {
		return r.call(fnGraphKernelNodeCopyAttributes, uintptr(dst), uintptr(src))
	}
	return r.call(fnGraphKernelNodeCopyAttributes, uintptr(src), uintptr(dst))
}
