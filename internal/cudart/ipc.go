package cudart

import (
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// The IPC calls. cudaIpcOpenMemHandle and cudaIpcOpenEventHandle take a 64-byte struct by
// value: on amd64 (SysV MEMORY class) it travels as 8 stack words after the integer registers,
// which are filled with the other arguments and zeros; on arm64 (AAPCS64) a composite over 16
// bytes is copied by the caller and passed by address. purego.SyscallN takes the words either
// way; none of these calls is hot.

// cudaMemHandleTypePosixFileDescriptor, the one shareable handle type gpuactor exports.
const handleTypePosixFD = uintptr(backend.HandlePosixFileDescriptor)

// IpcGetMemHandle is the handle of the allocation at p (cudaIpcGetMemHandle).
func (r *Runtime) IpcGetMemHandle(p DevicePtr) (backend.IPCHandle, error) {
	var h backend.IPCHandle
	err := r.call(fnIpcGetMemHandle, uintptr(unsafe.Pointer(&h)), uintptr(p))
	return h, err
}

// IpcOpenMemHandle maps memory another process exported (cudaIpcOpenMemHandle).
func (r *Runtime) IpcOpenMemHandle(h backend.IPCHandle, flags uint32) (DevicePtr, error) {
	fn, err := r.syms.get(fnIpcOpenMemHandle)
	if err != nil {
		return 0, err
	}
	var p DevicePtr
	var code uintptr
	if runtime.GOARCH == "amd64" {
		w := handleWords(&h)
		code, _, _ = purego.SyscallN(fn, uintptr(unsafe.Pointer(&p)), uintptr(flags), 0, 0, 0, 0,
			w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7])
	} else {
		c := h // the callee's copy, which it may write
		code, _, _ = purego.SyscallN(fn, uintptr(unsafe.Pointer(&p)), uintptr(unsafe.Pointer(&c)), uintptr(flags))
	}
	return p, r.newError(runtimeSymNames[fnIpcOpenMemHandle], int32(code))
}

// IpcCloseMemHandle unmaps memory from IpcOpenMemHandle (cudaIpcCloseMemHandle).
func (r *Runtime) IpcCloseMemHandle(p DevicePtr) error {
	return r.call(fnIpcCloseMemHandle, uintptr(p))
}

// IpcGetEventHandle is the handle of an interprocess event (cudaIpcGetEventHandle).
func (r *Runtime) IpcGetEventHandle(e Event) (backend.IPCHandle, error) {
	var h backend.IPCHandle
	err := r.call(fnIpcGetEventHandle, uintptr(unsafe.Pointer(&h)), uintptr(e))
	return h, err
}

// IpcOpenEventHandle opens an event another process exported (cudaIpcOpenEventHandle).
func (r *Runtime) IpcOpenEventHandle(h backend.IPCHandle) (Event, error) {
	fn, err := r.syms.get(fnIpcOpenEventHandle)
	if err != nil {
		return 0, err
	}
	var e Event
	var code uintptr
	if runtime.GOARCH == "amd64" {
		w := handleWords(&h)
		code, _, _ = purego.SyscallN(fn, uintptr(unsafe.Pointer(&e)), 0, 0, 0, 0, 0,
			w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7])
	} else {
		c := h
		code, _, _ = purego.SyscallN(fn, uintptr(unsafe.Pointer(&e)), uintptr(unsafe.Pointer(&c)))
	}
	return e, r.newError(runtimeSymNames[fnIpcOpenEventHandle], int32(code))
}

// handleWords is h as the 8 eightbytes it is copied to the stack as.
func handleWords(h *backend.IPCHandle) [8]uintptr {
	var w [8]uintptr
	for i := range w {
		w[i] = uintptr(*(*uint64)(unsafe.Pointer(&h[8*i])))
	}
	return w
}

// MemPoolExportFD exports pool as a POSIX file descriptor
// (cudaMemPoolExportToShareableHandle): the runtime writes a C int.
func (r *Runtime) MemPoolExportFD(pool backend.MemPool) (int, error) {
	var fd int32 = -1
	err := r.call(fnMemPoolExportToShareableHandle, uintptr(unsafe.Pointer(&fd)), uintptr(pool), handleTypePosixFD, 0)
	return int(fd), err
}

// MemPoolImportFD imports a pool from a POSIX file descriptor
// (cudaMemPoolImportFromShareableHandle): the descriptor travels as the pointer's value.
func (r *Runtime) MemPoolImportFD(fd int) (backend.MemPool, error) {
	var pool uintptr
	err := r.call(fnMemPoolImportFromShareableHandle, uintptr(unsafe.Pointer(&pool)), uintptr(fd), handleTypePosixFD, 0)
	return backend.MemPool(pool), err
}

// MemPoolExportPointer is the export data of a pool allocation (cudaMemPoolExportPointer).
func (r *Runtime) MemPoolExportPointer(p DevicePtr) (backend.IPCHandle, error) {
	var h backend.IPCHandle
	err := r.call(fnMemPoolExportPointer, uintptr(unsafe.Pointer(&h)), uintptr(p))
	return h, err
}

// MemPoolImportPointer maps an allocation of an imported pool (cudaMemPoolImportPointer).
func (r *Runtime) MemPoolImportPointer(pool backend.MemPool, data backend.IPCHandle) (DevicePtr, error) {
	var p DevicePtr
	err := r.call(fnMemPoolImportPointer, uintptr(unsafe.Pointer(&p)), uintptr(pool), uintptr(unsafe.Pointer(&data)))
	return p, err
}
