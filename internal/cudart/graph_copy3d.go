package cudart

import (
	"runtime"
	"unsafe"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// 3D copy nodes: a cudaMemcpy3DParms (memcpy3d.go) of kind cudaMemcpyDeviceToDevice between
// arrays and pitched device memory, as Copy3D queues on a stream. The three calls take the
// struct by pointer and copy it during the call; their signatures are the same from 11.x to
// 13.0.

// copy3DParms is p as the runtime takes it.
func copy3DParms(p backend.Copy3DParams) *Memcpy3DParms {
	c := new(Memcpy3DParms)
	c.SrcArray, c.SrcPos, c.SrcPtr = place3D(p.Src)
	c.DstArray, c.DstPos, c.DstPtr = place3D(p.Dst)
	c.Extent, c.Kind = Extent(p.Extent), MemcpyDeviceToDevice
	return c
}

// placeOf is one side of c as a backend place.
func placeOf(array uintptr, pos Pos, ptr PitchedPtr) backend.Place3D {
	if array != 0 {
		return backend.Place3D{Array: backend.Array(array), Pos: backend.Pos3D(pos)}
	}
	return backend.Place3D{Ptr: DevicePtr(ptr.Ptr), Pitch: ptr.Pitch, Rows: ptr.YSize, Pos: backend.Pos3D(pos)}
}

func (d *device) GraphAddMemcpyNode3D(g backend.Graph, deps []backend.GraphNode, p backend.Copy3DParams) (backend.GraphNode, error) {
	var node uintptr
	c := copy3DParms(p)
	err := d.rt.call(fnGraphAddMemcpyNode, uintptr(unsafe.Pointer(&node)), uintptr(g), nodeList(deps), uintptr(len(deps)),
		uintptr(unsafe.Pointer(c)))
	runtime.KeepAlive(c)
	runtime.KeepAlive(deps)
	return backend.GraphNode(node), err
}

func (d *device) GraphMemcpyNodeGetParams3D(n backend.GraphNode) (backend.Copy3DParams, error) {
	c, err := d.rt.GraphMemcpyNodeGetParams(n)
	if err != nil {
		return backend.Copy3DParams{}, err
	}
	if c.Kind != MemcpyDeviceToDevice {
		return backend.Copy3DParams{}, &cudaerr.Error{Op: "cudaGraphMemcpyNodeGetParams", Code: cudaerr.NotSupported,
			Message: "the copy node has a host side (or infers its sides): not a copy between arrays and device memory"}
	}
	return backend.Copy3DParams{
		Src:    placeOf(c.SrcArray, c.SrcPos, c.SrcPtr),
		Dst:    placeOf(c.DstArray, c.DstPos, c.DstPtr),
		Extent: backend.Extent3D(c.Extent),
	}, nil
}

func (d *device) GraphMemcpyNodeSetParams3D(n backend.GraphNode, p backend.Copy3DParams) error {
	c := copy3DParms(p)
	err := d.rt.call(fnGraphMemcpyNodeSetParams, uintptr(n), uintptr(unsafe.Pointer(c)))
	runtime.KeepAlive(c)
	return err
}

func (d *device) GraphExecMemcpyNodeSetParams3D(x backend.GraphExec, n backend.GraphNode, p backend.Copy3DParams) error {
	c := copy3DParms(p)
	err := d.rt.call(fnGraphExecMemcpyNodeSetParams, uintptr(x), uintptr(n), uintptr(unsafe.Pointer(c)))
	runtime.KeepAlive(c)
	return err
}
