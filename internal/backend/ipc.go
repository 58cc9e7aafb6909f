package backend

// IPCHandle is one of the runtime's 64-byte opaque interprocess blobs: a cudaIpcMemHandle_t,
// a cudaIpcEventHandle_t or a cudaMemPoolPtrExportData. The three have the same layout (64
// reserved bytes), so one Go type carries them all.
type IPCHandle [64]byte

// IpcMemLazyEnablePeerAccess is cudaIpcMemLazyEnablePeerAccess, the one flag
// IpcOpenMemHandle takes: the mapping may enable peer access to the exporting device.
const IpcMemLazyEnablePeerAccess uint32 = 1

// IPCDevice shares device memory, events and memory pools between processes. The simulator
// runs in one process and implements none of it: its methods return an error wrapping
// cudaerr.NotSupported.
type IPCDevice interface {
	// IpcGetMemHandle is the handle of the cudaMalloc allocation at p, for another process.
	IpcGetMemHandle(p DevicePtr) (IPCHandle, error)
	// IpcOpenMemHandle maps memory another process exported into this device's address
	// space (flags: IpcMemLazyEnablePeerAccess).
	IpcOpenMemHandle(h IPCHandle, flags uint32) (DevicePtr, error)
	// IpcCloseMemHandle unmaps memory from IpcOpenMemHandle.
	IpcCloseMemHandle(p DevicePtr) error
	// IpcGetEventHandle is the handle of e, an event made with EventInterprocess and
	// EventDisableTiming.
	IpcGetEventHandle(e Event) (IPCHandle, error)
	// IpcOpenEventHandle opens an event another process exported; destroy it with
	// EventDestroy.
	IpcOpenEventHandle(h IPCHandle) (Event, error)
	// MemPoolExportFD exports pool (made with HandlePosixFileDescriptor) as a new file
	// descriptor the caller owns.
	MemPoolExportFD(pool MemPool) (int, error)
	// MemPoolImportFD imports a pool from a file descriptor MemPoolExportFD made in another
	// process; the descriptor stays the caller's. Destroy the pool with MemPoolDestroy.
	MemPoolImportFD(fd int) (MemPool, error)
	// MemPoolExportPointer is the export data of p, an allocation of an exported pool.
	MemPoolExportPointer(p DevicePtr) (IPCHandle, error)
	// MemPoolImportPointer maps the allocation data names from pool, an imported pool;
	// free it with Free or FreeAsync.
	MemPoolImportPointer(pool MemPool, data IPCHandle) (DevicePtr, error)
}
