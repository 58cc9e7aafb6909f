package interop

import (
	"errors"
	"fmt"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Interprocess sharing (IPC): device memory, events and memory pools of one process opened by
// another on the same machine. The handles are plain values of 64 bytes that the processes
// exchange by any means (a pipe, shared memory, a socket); a pool travels as a file
// descriptor, which SendHandle and ReceiveHandle pass over a Unix socket.
//
// The real runtime shares on Linux, between processes that see the same GPUs, on devices
// with unified addressing. The simulator runs in one process and shares nothing: every IPC
// call on a simulated device fails with an error matching both ErrIPCNotSupported and
// cudaerr.NotSupported, and leaves the device usable.

// IPC errors. Each wraps the runtime's error, when there is one, so errors.Is matches the
// cudaerr code as well.
var (
	// ErrIPCNotSupported: the backend or the platform does not share between processes (the
	// simulator never does).
	ErrIPCNotSupported = errors.New("gpuactor/interop: interprocess sharing is not supported")
	// ErrOwnHandle: a handle was opened in the process that exported it, where the memory or
	// event is already at hand; CUDA refuses it.
	ErrOwnHandle = errors.New("gpuactor/interop: handle opened in the process that exported it")
	// ErrAlreadyOpen: a memory handle already open on the device was opened again; close the
	// first import, or share the buffer it gave.
	ErrAlreadyOpen = errors.New("gpuactor/interop: handle already open on this device")
	// ErrBadHandle: the runtime does not know the handle: it is garbage, the exported memory
	// was freed, or its exporter exited.
	ErrBadHandle = errors.New("gpuactor/interop: not a live IPC handle")
)

// HandleSize is the size in bytes of every IPC handle (CUDA_IPC_HANDLE_SIZE).
const HandleSize = 64

// MemHandle names device memory exported by ExportMemory, for OpenMemory in another process.
// It is a plain value: send its bytes (MarshalBinary, or the array itself) any way.
type MemHandle [HandleSize]byte

// EventHandle names an interprocess event exported by ExportEvent, for OpenEvent in another
// process.
type EventHandle [HandleSize]byte

// PoolPointer names one allocation of an exported pool (ExportPointer), for ImportPointer in
// a process that imported the pool.
type PoolPointer [HandleSize]byte

// MarshalBinary is the handle's 64 bytes.
func (h MemHandle) MarshalBinary() ([]byte, error) { return h[:], nil }

// UnmarshalBinary sets the handle from exactly 64 bytes.
func (h *MemHandle) UnmarshalBinary(b []byte) error { return ipcUnmarshal("MemHandle", h[:], b) }

// MarshalBinary is the handle's 64 bytes.
func (h EventHandle) MarshalBinary() ([]byte, error) { return h[:], nil }

// UnmarshalBinary sets the handle from exactly 64 bytes.
func (h *EventHandle) UnmarshalBinary(b []byte) error { return ipcUnmarshal("EventHandle", h[:], b) }

// MarshalBinary is the export data's 64 bytes.
func (p PoolPointer) MarshalBinary() ([]byte, error) { return p[:], nil }

// UnmarshalBinary sets the export data from exactly 64 bytes.
func (p *PoolPointer) UnmarshalBinary(b []byte) error { return ipcUnmarshal("PoolPointer", p[:], b) }

func ipcUnmarshal(what string, dst, src []byte) error {
	if len(src) != HandleSize {
		return core.Invalid("a %s is %d bytes, got %d", what, HandleSize, len(src))
	}
	copy(dst, src)
	return nil
}

// ipcError turns the runtime's refusal of op into the interop error that says why, keeping
// the runtime's error wrapped.
func ipcError(op string, err error) error {
	if err == nil {
		return nil
	}
	var why error
	switch {
	case errors.Is(err, cudaerr.NotSupported):
		why = ErrIPCNotSupported
	case errors.Is(err, cudaerr.DeviceUninitialized): // cudaErrorInvalidContext in older runtimes
		why = ErrOwnHandle
	case errors.Is(err, cudaerr.AlreadyMapped):
		why = ErrAlreadyOpen
	case errors.Is(err, cudaerr.InvalidValue), errors.Is(err, cudaerr.InvalidResourceHandle),
		errors.Is(err, cudaerr.MapBufferObjectFailed), errors.Is(err, cudaerr.InvalidDevicePointer):
		why = ErrBadHandle
	default:
		return fmt.Errorf("gpuactor/interop: %s: %w", op, err)
	}
	return fmt.Errorf("%w: %s: %w", why, op, err)
}

// ipcIsInvalidValue reports a runtime InvalidValue.
func ipcIsInvalidValue(err error) bool { return errors.Is(err, cudaerr.InvalidValue) }
