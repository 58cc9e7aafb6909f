package cudart

import "github.com/gpuactor/gpuactor/internal/backend"

func (d *device) IpcGetMemHandle(p DevicePtr) (backend.IPCHandle, error) {
	return d.rt.IpcGetMemHandle(p)
}

func (d *device) IpcOpenMemHandle(h backend.IPCHandle, flags uint32) (DevicePtr, error) {
	return d.rt.IpcOpenMemHandle(h, flags)
}

func (d *device) IpcCloseMemHandle(p DevicePtr) error { return d.rt.IpcCloseMemHandle(p) }

func (d *device) IpcGetEventHandle(e Event) (backend.IPCHandle, error) {
	return d.rt.IpcGetEventHandle(e)
}

func (d *device) IpcOpenEventHandle(h backend.IPCHandle) (Event, error) {
	return d.rt.IpcOpenEventHandle(h)
}

func (d *device) MemPoolExportFD(pool backend.MemPool) (int, error) {
	return d.rt.MemPoolExportFD(pool)
}

func (d *device) MemPoolImportFD(fd int) (backend.MemPool, error) { return d.rt.MemPoolImportFD(fd) }

func (d *device) MemPoolExportPointer(p DevicePtr) (backend.IPCHandle, error) {
	return d.rt.MemPoolExportPointer(p)
}

func (d *device) MemPoolImportPointer(pool backend.MemPool, data backend.IPCHandle) (DevicePtr, error) {
	return d.rt.MemPoolImportPointer(pool, data)
}

var _ backend.IPCDevice = (*device)(nil)
