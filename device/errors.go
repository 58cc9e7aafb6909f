package device

import (
	"errors"
	"fmt"

	"github.com/gpuactor/gpuactor/actor"
)

// Errors returned for misuse. Each is wrapped with the detail of what was wrong, so match
// them with errors.Is.
var (
	// ErrInvalidArgument: a nil or empty slice, a negative or zero size, a nil buffer.
	ErrInvalidArgument = errors.New("gpuactor: invalid argument")
	// ErrOutOfRange: a copy or view that runs past the end of a buffer or a slice.
	ErrOutOfRange = errors.New("gpuactor: out of range")
	// ErrFreed: the buffer, host buffer or module was already freed or unloaded.
	ErrFreed = errors.New("gpuactor: already freed")
	// ErrAllocFailed: the buffer's stream-ordered allocation failed when the device ran it
	// (out of memory, a destroyed pool…); every use of the buffer fails with it, wrapping the
	// cause, so errors.Is also matches the cause (cudaerr.MemoryAllocation, say).
	ErrAllocFailed = errors.New("gpuactor: the buffer's allocation failed")
	// ErrWrongDevice: memory or a kernel of one device used with another.
	ErrWrongDevice = errors.New("gpuactor: belongs to another device")
	// ErrLaunchConfig: a grid, block or shared-memory size outside the device's limits.
	ErrLaunchConfig = errors.New("gpuactor: launch configuration outside device limits")
	// ErrKernelArgs: kernel arguments that do not match the kernel's parameters.
	ErrKernelArgs = errors.New("gpuactor: kernel arguments do not match parameters")
	// ErrNoKernel: the module has no kernel of that name (on the simulator: no Go implementation).
	ErrNoKernel = errors.New("gpuactor: no such kernel")
	// ErrCompile: NVRTC rejected the source; the *CompileError carries the log.
	ErrCompile = errors.New("gpuactor: kernel compilation failed")
	// ErrDeviceFailed: an earlier sticky error (illegal address, launch failure…) corrupted the
	// device's context; every later call fails with it. Only a new process recovers the device.
	ErrDeviceFailed = errors.New("gpuactor: device failed")
	// ErrClosed: the device was closed.
	ErrClosed = actor.ErrClosed
	// ErrBackend: the requested backend cannot be used here.
	ErrBackend = errors.New("gpuactor: backend unavailable")
)

// CompileError is a kernel compilation failure with NVRTC's log.
type CompileError struct {
	Source  string // the Source's Name
	Options []string
	Log     string
	Err     error // the NVRTC error
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("gpuactor: compiling %s failed: %v\n%s", e.Source, e.Err, e.Log)
}

// Unwrap lets errors.Is match ErrCompile and the NVRTC error.
func (e *CompileError) Unwrap() []error { return []error{ErrCompile, e.Err} }

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidArgument}, args...)...)
}

func outOfRange(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrOutOfRange}, args...)...)
}

func wrongDevice(what string, owner, used *Device) error {
	return fmt.Errorf("%w: %s lives on device %d, used on device %d", ErrWrongDevice, what, owner.ordinal, used.ordinal)
}

func freedErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrFreed}, args...)...)
}
