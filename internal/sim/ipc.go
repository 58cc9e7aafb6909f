package sim

import (
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// The simulator lives in one process, so it shares nothing between processes: every IPC call
// fails with cudaErrorNotSupported, as the real runtime does on a platform without IPC, and
// leaves the device as it was (the error is not sticky).

// ipcNotSupported is the error of IPC call op.
func (d *device) ipcNotSupported(op string) error {
	if err := d.alive(op); err != nil {
		return err
	}
	return d.fail(op, cudaerr.NotSupported, "interprocess sharing is not simulated: the simulator runs in one process")
}

func (d *device) IpcGetMemHandle(backend.DevicePtr) (backend.IPCHandle, error) {
	return backend.IPCHandle{}, d.ipcNotSupported("cudaIpcGetMemHandle")
}

func (d *device) IpcOpenMemHandle(backend.IPCHandle, uint32) (backend.DevicePtr, error) {
	return 0, d.ipcNotSupported("cudaIpcOpenMemHandle")
}

func (d *device) IpcCloseMemHandle(backend.DevicePtr) error {
	return d.ipcNotSupported("cudaIpcCloseMemHandle")
}

func (d *device) IpcGetEventHandle(backend.Event) (backend.IPCHandle, error) {
	return backend.IPCHandle{}, d.ipcNotSupported("cudaIpcGetEventHandle")
}

func (d *device) IpcOpenEventHandle(backend.IPCHandle) (backend.Event, error) {
	return 0, d.ipcNotSupported("cudaIpcOpenEventHandle")
}

func (d *device) MemPoolExportFD(backend.MemPool) (int, error) {
	return -1, d.ipcNotSupported("cudaMemPoolExportToShareableHandle")
}

func (d *device) MemPoolImportFD(int) (backend.MemPool, error) {
	return 0, d.ipcNotSupported("cudaMemPoolImportFromShareableHandle")
}

func (d *device) MemPoolExportPointer(backend.DevicePtr) (backend.IPCHandle, error) {
	return backend.IPCHandle{}, d.ipcNotSupported("cudaMemPoolExportPointer")
}

func (d *device) MemPoolImportPointer(backend.MemPool, backend.IPCHandle) (backend.DevicePtr, error) {
	return 0, d.ipcNotSupported("cudaMemPoolImportPointer")
}
