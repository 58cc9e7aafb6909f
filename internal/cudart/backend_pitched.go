package cudart

import "unsafe"

func (d *device) MallocPitch(width, height uint64) (DevicePtr, uint64, error) {
	return d.rt.MallocPitch(width, height)
}

func (d *device) Copy2DDtoD(dst DevicePtr, dpitch uint64, src DevicePtr, spitch, width, height uint64, s Stream) error {
	return d.rt.Memcpy2DAsync(uintptr(dst), dpitch, uintptr(src), spitch, width, height, MemcpyDeviceToDevice, s)
}

func (d *device) Copy2DHtoD(dst DevicePtr, dpitch uint64, src unsafe.Pointer, spitch, width, height uint64, s Stream) error {
	return d.rt.Memcpy2DAsync(uintptr(dst), dpitch, uintptr(src), spitch, width, height, MemcpyHostToDevice, s)
}

func (d *device) Copy2DDtoH(dst unsafe.Pointer, dpitch uint64, src DevicePtr, spitch, width, height uint64, s Stream) error {
	return d.rt.Memcpy2DAsync(uintptr(dst), dpitch, uintptr(src), spitch, width, height, MemcpyDeviceToHost, s)
}

func (d *device) Memset2D(p DevicePtr, pitch uint64, value byte, width, height uint64, s Stream) error {
	return d.rt.Memset2DAsync(p, pitch, value, width, height, s)
}
