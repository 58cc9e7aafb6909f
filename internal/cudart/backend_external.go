package cudart

import "github.com/gpuactor/gpuactor/internal/backend"

func (d *device) ImportExternalMemoryFD(fd int, size uint64, flags uint32) (backend.ExternalMemory, error) {
	return d.rt.ImportExternalMemoryFD(fd, size, flags)
}

func (d *device) ExternalMemoryMappedBuffer(m backend.ExternalMemory, offset, size uint64) (DevicePtr, error) {
	return d.rt.ExternalMemoryGetMappedBuffer(m, offset, size)
}

func (d *device) ExternalMemoryMappedMipmappedArray(m backend.ExternalMemory, offset uint64, f backend.ChannelFormat, e backend.Extent3D, levels, flags uint32) (backend.MipmappedArray, error) {
	return d.rt.ExternalMemoryGetMappedMipmappedArray(m, offset, f, e, levels, flags)
}

func (d *device) DestroyExternalMemory(m backend.ExternalMemory) error {
	return d.rt.DestroyExternalMemory(m)
}

func (d *device) ImportExternalSemaphoreFD(fd int, kind backend.ExternalSemaphoreKind) (backend.ExternalSemaphore, error) {
	return d.rt.ImportExternalSemaphoreFD(fd, kind)
}

func (d *device) SignalExternalSemaphore(sem backend.ExternalSemaphore, value uint64, s Stream) error {
	return d.rt.SignalExternalSemaphore(sem, value, s)
}

func (d *device) WaitExternalSemaphore(sem backend.ExternalSemaphore, value uint64, s Stream) error {
	return d.rt.WaitExternalSemaphore(sem, value, s)
}

func (d *device) DestroyExternalSemaphore(sem backend.ExternalSemaphore) error {
	return d.rt.DestroyExternalSemaphore(sem)
}

func (d *device) DriverEntryPoint(symbol string, version int, flags uint64) (uintptr, error) {
	return d.rt.DriverEntryPoint(symbol, version, flags)
}

func (d *device) StreamGetDevice(s Stream) (int, error)   { return d.rt.StreamGetDevice(s) }
func (d *device) StreamGetFlags(s Stream) (uint32, error) { return d.rt.StreamGetFlags(s) }
func (d *device) StreamGetPriority(s Stream) (int, error) { return d.rt.StreamGetPriority(s) }

var (
	_ backend.ExternalDevice = (*device)(nil)
	_ backend.RawDevice      = (*device)(nil)
)
