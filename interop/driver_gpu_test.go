//go:build linux

package interop_test

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/streams"
)

// Driver functions found through DriverEntryPoint and called through purego answer as the
// runtime's own view of the machine does; one that needs a context works once the device's
// primary context is current on the calling thread, as DriverEntryPoint's documentation says.
func TestDriverEntryPointCallsTheDriver(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev := openExternalGPU(t, ctx)
	entry := func(symbol string, opts ...interop.DriverOption) uintptr {
		t.Helper()
		fn, err := interop.DriverEntryPoint(ctx, dev, symbol, opts...)
		require.NoError(t, err, symbol)
		require.NotZero(t, fn, symbol)
		return fn
	}
	call := func(name string, fn uintptr, args ...uintptr) {
		t.Helper()
		r, _, _ := purego.SyscallN(fn, args...)
		require.Zero(t, r, "%s returned CUresult %d", name, r)
	}

	var version int32
	call("cuDriverGetVersion", entry("cuDriverGetVersion"), uintptr(unsafe.Pointer(&version)))
	assert.EqualValues(t, dev.Properties().DriverVersion, version)
	var count int32
	call("cuDeviceGetCount", entry("cuDeviceGetCount"), uintptr(unsafe.Pointer(&count)))
	n, err := device.Count(ctx, device.WithBackend(device.BackendCUDA))
	require.NoError(t, err)
	assert.EqualValues(t, n, count)

	// cuMemGetInfo acts on the current context: the device's primary one, made current here.
	_, total, err := dev.MemInfo(ctx)
	require.NoError(t, err)
	runtime.LockOSThread()
	var cudev int32
	var pctx uintptr
	var free, size uint64
	call("cuDeviceGet", entry("cuDeviceGet"), uintptr(unsafe.Pointer(&cudev)), uintptr(dev.Ordinal()))
	call("cuDevicePrimaryCtxRetain", entry("cuDevicePrimaryCtxRetain"), uintptr(unsafe.Pointer(&pctx)), uintptr(cudev))
	call("cuCtxSetCurrent", entry("cuCtxSetCurrent"), pctx)
	call("cuMemGetInfo", entry("cuMemGetInfo"), uintptr(unsafe.Pointer(&free)), uintptr(unsafe.Pointer(&size)))
	call("cuCtxSetCurrent", entry("cuCtxSetCurrent"), 0)
	call("cuDevicePrimaryCtxRelease", entry("cuDevicePrimaryCtxRelease"), uintptr(cudev))
	runtime.UnlockOSThread()
	assert.Equal(t, total, size, "cuMemGetInfo's total is the runtime's")
	assert.NotZero(t, free)

	// The stream variants: cuMemcpyAsync has a per-thread one, cuDriverGetVersion none.
	assert.NotEqual(t, entry("cuMemcpyAsync"), entry("cuMemcpyAsync", interop.PerThreadDefaultStream()))
	assert.Equal(t, entry("cuDriverGetVersion"), entry("cuDriverGetVersion", interop.PerThreadDefaultStream()))
	entry("cuMemAlloc", interop.ForCUDAVersion(11000))

	_, err = interop.DriverEntryPoint(ctx, dev, "cuNoSuchFunction")
	require.ErrorIs(t, err, cudaerr.SymbolNotFound)
	require.ErrorContains(t, err, "cuNoSuchFunction")
	_, err = interop.DriverEntryPoint(ctx, dev, "cuMemAlloc", interop.ForCUDAVersion(int(version)+10000))
	require.ErrorIs(t, err, cudaerr.InvalidValue, "a version newer than the driver")

	require.NoError(t, dev.Err())
	buf, err := dev.MallocBytes(ctx, 64)
	require.NoError(t, err)
	require.NoError(t, streams.Default(dev).Memset(ctx, buf, 1).Wait(ctx))
}
