package cudart

import "github.com/gpuactor/gpuactor/internal/backend"

func (d *device) MallocArray(f backend.ChannelFormat, width, height uint64, flags uint32) (backend.Array, error) {
	return d.rt.MallocArray(f, width, height, flags)
}

func (d *device) Malloc3DArray(f backend.ChannelFormat, e backend.Extent3D, flags uint32) (backend.Array, error) {
	return d.rt.Malloc3DArray(f, Extent(e), flags)
}

func (d *device) FreeArray(a backend.Array) error { return d.rt.FreeArray(a) }

func (d *device) ArrayInfo(a backend.Array) (backend.ArrayInfo, error) {
	f, e, flags, err := d.rt.ArrayGetInfo(a)
	return backend.ArrayInfo{Format: f, Extent: backend.Extent3D(e), Flags: flags}, err
}

func (d *device) ChannelDesc(a backend.Array) (backend.ChannelFormat, error) {
	return d.rt.GetChannelDesc(a)
}

func (d *device) ArrayPlane(a backend.Array, plane uint32) (backend.Array, error) {
	return d.rt.ArrayGetPlane(a, plane)
}

func (d *device) MallocMipmappedArray(f backend.ChannelFormat, e backend.Extent3D, levels, flags uint32) (backend.MipmappedArray, error) {
	return d.rt.MallocMipmappedArray(f, Extent(e), levels, flags)
}

func (d *device) MipmappedArrayLevel(m backend.MipmappedArray, level uint32) (backend.Array, error) {
	return d.rt.GetMipmappedArrayLevel(m, level)
}

func (d *device) FreeMipmappedArray(m backend.MipmappedArray) error {
	return d.rt.FreeMipmappedArray(m)
}

func (d *device) ArrayMemoryRequirements(a backend.Array) (backend.ArrayMemoryRequirements, error) {
	return d.rt.ArrayGetMemoryRequirements(a, d.ordinal)
}

func (d *device) MipmappedArrayMemoryRequirements(m backend.MipmappedArray) (backend.ArrayMemoryRequirements, error) {
	return d.rt.MipmappedArrayGetMemoryRequirements(m, d.ordinal)
}

func (d *device) ArraySparseProperties(a backend.Array) (backend.ArraySparseProperties, error) {
	return d.rt.ArrayGetSparseProperties(a)
}

func (d *device) MipmappedArraySparseProperties(m backend.MipmappedArray) (backend.ArraySparseProperties, error) {
	return d.rt.MipmappedArrayGetSparseProperties(m)
}

// place3D is a device-side 3D copy as cudaMemcpy3DParms' places: an array, or pitched memory
// whose xsize the runtime reads only for host memory, set to the pitch.
func place3D(p backend.Place3D) (uintptr, Pos, PitchedPtr) {
	if p.Array != 0 {
		return uintptr(p.Array), Pos(p.Pos), PitchedPtr{}
	}
	return 0, Pos(p.Pos), PitchedPtr{Ptr: uintptr(p.Ptr), Pitch: p.Pitch, XSize: p.Pitch, YSize: p.Rows}
}

func (d *device) Copy3D(p backend.Copy3DParams, s Stream) error {
	var c Memcpy3DParms
	c.SrcArray, c.SrcPos, c.SrcPtr = place3D(p.Src)
	c.DstArray, c.DstPos, c.DstPtr = place3D(p.Dst)
	c.Extent, c.Kind = Extent(p.Extent), MemcpyDeviceToDevice
	return d.rt.Memcpy3DAsync(&c, s)
}

func (d *device) Copy3DPeer(p backend.Copy3DParams, src, dst int, s Stream) error {
	var c Memcpy3DPeerParms
	c.SrcArray, c.SrcPos, c.SrcPtr = place3D(p.Src)
	c.DstArray, c.DstPos, c.DstPtr = place3D(p.Dst)
	c.SrcDevice, c.DstDevice, c.Extent = int32(src), int32(dst), Extent(p.Extent)
	return d.rt.Memcpy3DPeerAsync(&c, s)
}

func (d *device) Copy2DToArray(a backend.Array, wOffset, hOffset uint64, src DevicePtr, spitch, width, height uint64, s Stream) error {
	return d.rt.Memcpy2DToArrayAsync(a, wOffset, hOffset, uintptr(src), spitch, width, height, MemcpyDeviceToDevice, s)
}

func (d *device) Copy2DFromArray(dst DevicePtr, dpitch uint64, a backend.Array, wOffset, hOffset, width, height uint64, s Stream) error {
	return d.rt.Memcpy2DFromArrayAsync(uintptr(dst), dpitch, a, wOffset, hOffset, width, height, MemcpyDeviceToDevice, s)
}

func (d *device) Memset3D(p DevicePtr, pitch, rows uint64, value byte, e backend.Extent3D, s Stream) error {
	return d.rt.Memset3DAsync(PitchedPtr{Ptr: uintptr(p), Pitch: pitch, XSize: pitch, YSize: rows}, value, Extent(e), s)
}
