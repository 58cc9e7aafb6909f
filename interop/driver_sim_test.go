package interop_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/streams"
)

// The simulator has no driver: DriverEntryPoint is refused with NotSupported, bad input with
// ErrInvalidArgument before the runtime is asked, and the device goes on working.
func TestDriverEntryPointRefusals(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev, _ := simDevice(t, ctx)

	_, err := interop.DriverEntryPoint(ctx, dev, "cuDriverGetVersion")
	require.ErrorIs(t, err, cudaerr.NotSupported)
	require.ErrorContains(t, err, "no CUDA driver")
	_, err = interop.DriverEntryPoint(ctx, dev, "cuMemcpyAsync", interop.PerThreadDefaultStream(), interop.ForCUDAVersion(12000))
	require.ErrorIs(t, err, cudaerr.NotSupported)

	for name, err := range map[string]error{
		"nil device":       second(interop.DriverEntryPoint(ctx, nil, "cuDriverGetVersion")),
		"empty symbol":     second(interop.DriverEntryPoint(ctx, dev, "")),
		"NUL in symbol":    second(interop.DriverEntryPoint(ctx, dev, "cuMemAlloc\x00_v2")),
		"negative version": second(interop.DriverEntryPoint(ctx, dev, "cuMemAlloc", interop.ForCUDAVersion(-1))),
	} {
		require.ErrorIs(t, err, core.ErrInvalidArgument, name)
	}

	require.NoError(t, dev.Err())
	buf, err := dev.MallocBytes(ctx, 64)
	require.NoError(t, err)
	require.NoError(t, streams.Default(dev).Memset(ctx, buf, 1).Wait(ctx))
}
