package interop

import (
	"context"
	"strings"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// DriverOption configures DriverEntryPoint.
type DriverOption func(*driverConfig)

type driverConfig struct {
	version int
	flags   uint64
}

// ForCUDAVersion asks for the driver function as CUDA version v (1000 × major + 10 × minor:
// 12020 for 12.2) defines it, whose signature is the one that version's cuda.h declares. The
// default is the loaded runtime's own version. The runtime refuses a version newer than the
// driver (cudaerr.InvalidValue); runtimes before 12.5 answer for their own version only
// (cudaerr.NotSupported for any other).
func ForCUDAVersion(v int) DriverOption { return func(c *driverConfig) { c.version = v } }

// PerThreadDefaultStream asks for the per-thread default stream variant of a function that has
// one (cuMemcpyAsync_ptsz for cuMemcpyAsync): cudaEnablePerThreadDefaultStream. The default is
// the legacy variant (cudaEnableLegacyStream), the one gpuactor's own calls use.
func PerThreadDefaultStream() DriverOption {
	return func(c *driverConfig) { c.flags = backend.DriverEntryPerThreadStream }
}

// DriverEntryPoint returns the address of the CUDA driver API function named symbol, by its
// base name without a version suffix ("cuMemAlloc" for cuMemAlloc_v2), as dev's runtime
// finds it (cudaGetDriverEntryPointByVersion): for calling a driver function gpuactor does
// not wrap through a foreign-function library, such as purego.SyscallN. It returns once the
// runtime has answered; the address is valid for the life of the process.
//
// A driver function that acts on the current context acts on the one current to the calling
// OS thread, which is not dev's actor thread: lock the goroutine to its thread
// (runtime.LockOSThread) and make dev's primary context current there first
// (cuDevicePrimaryCtxRetain, then cuCtxSetCurrent), as the runtime's own calls do. Work queued
// that way on gpuactor's streams (streams.Stream.Handle) is not tracked by their futures.
//
// A symbol the driver lacks, or lacks in the version asked for, is a cudaerr.SymbolNotFound
// error naming it. An empty symbol or one holding a NUL byte, or a negative version, is an
// ErrInvalidArgument error. The simulator has no driver, and an isolated device's is in its
// worker process, where an address means nothing to the caller: both refuse with
// cudaerr.NotSupported. The device stays usable after any of them.
func DriverEntryPoint(ctx context.Context, dev *device.Device, symbol string, opts ...DriverOption) (uintptr, error) {
	if dev == nil {
		return 0, core.Invalid("DriverEntryPoint on a nil device")
	}
	if symbol == "" || strings.IndexByte(symbol, 0) >= 0 {
		return 0, core.Invalid("DriverEntryPoint of symbol %q: a driver function's name, such as cuMemGetInfo", symbol)
	}
	c := driverConfig{flags: backend.DriverEntryLegacyStream}
	for _, o := range opts {
		o(&c)
	}
	if c.version < 0 {
		return 0, core.Invalid("DriverEntryPoint of %s for CUDA version %d: 1000 × major + 10 × minor, or 0 for the runtime's own", symbol, c.version)
	}
	return core.Run(ctx, (*core.Device)(dev), func(rt backend.Device, _ *core.Tracker) (uintptr, error) {
		return rt.DriverEntryPoint(symbol, c.version, c.flags)
	}).Await(ctx)
}
