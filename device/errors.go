package device

import (
	"errors"
	"fmt"

	"github.com/gpuactor/gpuactor/internal/backendsel"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Errors returned for misuse and failure. Each is wrapped with the detail of what was wrong,
// so match them with errors.Is. The other packages of gpuactor wrap the same sentinels.
var (
	// ErrInvalidArgument: a nil or empty slice, a negative or zero size, a nil buffer.
	ErrInvalidArgument = core.ErrInvalidArgument
	// ErrOutOfRange: a copy or view that runs past the end of a buffer or a slice.
	ErrOutOfRange = core.ErrOutOfRange
	// ErrClosed: used after release. A closed device, and a buffer, host buffer, module,
	// stream, event, graph, pool or any other resource used after its Close (or closed
	// twice), return an error wrapping it.
	ErrClosed = core.ErrClosed
	// ErrShutdown: the device's Shutdown deadline passed before the operation completed. The
	// error wraps ErrClosed too.
	ErrShutdown = core.ErrShutdown
	// ErrAllocFailed: the buffer's stream-ordered allocation failed when the device ran it
	// (out of memory, a closed pool…); every use of the buffer fails with it, wrapping the
	// cause, so errors.Is also matches the cause (cudaerr.MemoryAllocation, say).
	ErrAllocFailed = core.ErrAllocFailed
	// ErrWrongDevice: memory or a kernel of one device used with another.
	ErrWrongDevice = core.ErrWrongDevice
	// ErrLaunchConfig: a grid, block or shared-memory size outside the device's limits.
	ErrLaunchConfig = core.ErrLaunchConfig
	// ErrKernelArgs: kernel arguments that do not match the kernel's parameters.
	ErrKernelArgs = core.ErrKernelArgs
	// ErrNoKernel: the module has no kernel of that name (on the simulator: no Go implementation).
	ErrNoKernel = core.ErrNoKernel
	// ErrNoGlobal: the module has no __device__ or __constant__ variable of that name (on the
	// simulator: none declared in Source.SimGlobals).
	ErrNoGlobal = core.ErrNoGlobal
	// ErrDeviceFailed: an earlier sticky error (illegal address, launch failure…) corrupted the
	// device's context; every later call fails with it. Only a new process recovers the device.
	ErrDeviceFailed = core.ErrDeviceFailed
	// ErrInHostFunc: a call that waits for the device or a stream of it (Synchronize, Close,
	// Shutdown) was made from one of the device's host functions, whose work it would wait
	// for; CUDA forbids such calls there.
	ErrInHostFunc = core.ErrInHostFunc
	// ErrStuck is wrapped, beside ErrDeviceFailed, by the failure of a device whose watchdog
	// (WithWatchdog) saw the GPU pass none of its work for longer than its deadline.
	ErrStuck = core.ErrStuck
	// ErrMemoryLimit: an allocation would take the device past the limit set with
	// WithMemoryLimit.
	ErrMemoryLimit = core.ErrMemoryLimit
	// ErrCompile: NVRTC rejected the source; the *CompileError carries the log.
	ErrCompile = errors.New("gpuactor: kernel compilation failed")
	// ErrBackend: the requested backend cannot be used here.
	ErrBackend = backendsel.ErrBackend
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
