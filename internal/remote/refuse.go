package remote

import (
	"fmt"
	"unsafe"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// The methods below take or return what only one process can use: a pointer into the
// parent's memory, a Go closure, or a file descriptor of the parent. They need memory both
// processes map, callbacks to the parent, or descriptors passed over the control socket,
// none of which the remote backend carries yet (HostAlloc's memory is the exception:
// hostmem.go), so they fail at once with cudaerr.NotSupported and touch nothing.

// refuse is the error of a method an isolated device does not carry.
func refuse(what string) error {
	return &cudaerr.Error{Op: what, Code: cudaerr.NotSupported,
		Message: fmt.Sprintf("not supported on an isolated device: %s", what)}
}

// refuseWhy is refuse with the reason the caller needs to choose another way.
func refuseWhy(what, why string) error {
	return &cudaerr.Error{Op: what, Code: cudaerr.NotSupported,
		Message: fmt.Sprintf("not supported on an isolated device: %s (%s)", what, why)}
}

// HostUnregister is refused (HostRegister is).
func (d *Device) HostUnregister(p unsafe.Pointer) error { return refuse("HostUnregister") }

// LaunchHostFunc is refused: fn is a closure of the parent.
func (d *Device) LaunchHostFunc(s backend.Stream, fn func()) error {
	return refuse("LaunchHostFunc")
}

// ManagedHost is refused: managed memory is mapped in the worker only.
func (d *Device) ManagedHost(p backend.DevicePtr, n uint64) (unsafe.Pointer, error) {
	return nil, refuseWhy("ManagedHost", "managed memory would be mapped in the worker's process only, where this process cannot read or write it; use pinned memory (alloc.MallocPinned) and copies, or an in-process device")
}

// GraphAddHostNode is refused: fn is a closure of the parent.
func (d *Device) GraphAddHostNode(g backend.Graph, deps []backend.GraphNode, fn func()) (backend.GraphNode, error) {
	return 0, refuse("GraphAddHostNode")
}

// ImportExternalMemoryFD is refused: fd is the parent's descriptor.
func (d *Device) ImportExternalMemoryFD(fd int, size uint64, flags uint32) (backend.ExternalMemory, error) {
	return 0, refuse("ImportExternalMemoryFD")
}

// ImportExternalSemaphoreFD is refused: fd is the parent's descriptor.
func (d *Device) ImportExternalSemaphoreFD(fd int, kind backend.ExternalSemaphoreKind) (backend.ExternalSemaphore, error) {
	return 0, refuse("ImportExternalSemaphoreFD")
}

// DriverEntryPoint is refused: the address would be of a function in the worker's process.
func (d *Device) DriverEntryPoint(symbol string, version int, flags uint64) (uintptr, error) {
	return 0, refuseWhy("DriverEntryPoint", "the address would be in the worker's process; use an in-process device")
}

// MemPoolExportFD is refused: the descriptor would be the worker's.
func (d *Device) MemPoolExportFD(pool backend.MemPool) (int, error) {
	return -1, refuse("MemPoolExportFD")
}

// MemPoolImportFD is refused: fd is the parent's descriptor.
func (d *Device) MemPoolImportFD(fd int) (backend.MemPool, error) {
	return 0, refuse("MemPoolImportFD")
}

// HostRegister is refused: memory the parent already has cannot be shared with the worker
// after the fact; HostAlloc's memory is shared from the start.
func (d *Device) HostRegister(p unsafe.Pointer, size uint64, flags uint32) error {
	return refuse("HostRegister (an isolated device's host memory comes from HostAlloc)")
}

// GraphHostNodeSetParams is refused: fn is a closure of the parent.
func (d *Device) GraphHostNodeSetParams(g backend.Graph, n backend.GraphNode, fn func()) error {
	return refuse("GraphHostNodeSetParams")
}

// GraphExecHostNodeSetParams is refused: fn is a closure of the parent.
func (d *Device) GraphExecHostNodeSetParams(x backend.GraphExec, n backend.GraphNode, fn func()) error {
	return refuse("GraphExecHostNodeSetParams")
}
