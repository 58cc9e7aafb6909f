package cudart

import (
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

func (d *device) MallocAsync(size uint64, s Stream) (DevicePtr, error) {
	return d.rt.mallocAsync(&d.frame, size, s)
}

func (d *device) MallocFromPoolAsync(size uint64, pool backend.MemPool, s Stream) (DevicePtr, error) {
	return d.rt.mallocFromPoolAsync(&d.frame, size, pool, s)
}

func (d *device) FreeAsync(p DevicePtr, s Stream) error { return d.rt.freeAsync(&d.frame, p, s) }

func (d *device) MemPoolCreate(props backend.PoolProps) (backend.MemPool, error) {
	return d.rt.MemPoolCreate(props)
}

func (d *device) MemPoolDestroy(pool backend.MemPool) error { return d.rt.MemPoolDestroy(pool) }

func (d *device) DefaultMemPool() (backend.MemPool, error) {
	return d.rt.DeviceGetDefaultMemPool(d.ordinal)
}

func (d *device) CurrentMemPool() (backend.MemPool, error) { return d.rt.DeviceGetMemPool(d.ordinal) }

func (d *device) SetCurrentMemPool(pool backend.MemPool) error {
	return d.rt.DeviceSetMemPool(d.ordinal, pool)
}

func (d *device) MemPoolSetAttribute(pool backend.MemPool, attr backend.PoolAttr, value uint64) error {
	return d.rt.MemPoolSetAttribute(pool, attr, value)
}

func (d *device) MemPoolGetAttribute(pool backend.MemPool, attr backend.PoolAttr) (uint64, error) {
	return d.rt.MemPoolGetAttribute(pool, attr)
}

func (d *device) MemPoolTrimTo(pool backend.MemPool, keep uint64) error {
	return d.rt.MemPoolTrimTo(pool, keep)
}

func (d *device) MemPoolSetAccess(pool backend.MemPool, ordinal int, flags backend.AccessFlags) error {
	return d.rt.MemPoolSetAccess(pool, ordinal, flags)
}

func (d *device) MemPoolGetAccess(pool backend.MemPool, ordinal int) (backend.AccessFlags, error) {
	return d.rt.MemPoolGetAccess(pool, ordinal)
}

func (d *device) MallocManaged(size uint64, flags uint32) (DevicePtr, error) {
	return d.rt.MallocManaged(size, flags)
}

// ManagedHost is p itself: managed memory has one address on the host and the devices.
func (d *device) ManagedHost(p DevicePtr, _ uint64) (unsafe.Pointer, error) {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p)), nil // C memory, which Go neither moves nor frees
}

func (d *device) MemPrefetch(p DevicePtr, n uint64, loc backend.Location, s Stream) error {
	return d.rt.MemPrefetchAsync(p, n, loc, s)
}

func (d *device) MemAdvise(p DevicePtr, n uint64, advice backend.Advice, loc backend.Location) error {
	return d.rt.MemAdvise(p, n, advice, loc)
}

func (d *device) MemRangeAttribute(p DevicePtr, n uint64, attr backend.RangeAttr, out []int32) error {
	return d.rt.MemRangeGetAttribute(p, n, attr, out)
}

func (d *device) StreamAttachMem(s Stream, p DevicePtr, n uint64, flags uint32) error {
	return d.rt.StreamAttachMemAsync(s, p, n, flags)
}

func (d *device) PointerAttributes(p uintptr) (backend.PointerAttrs, error) {
	return d.rt.PointerGetAttributes(p)
}

func (d *device) HostDevicePointer(p unsafe.Pointer) (DevicePtr, error) {
	return d.rt.HostGetDevicePointer(p)
}
