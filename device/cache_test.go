package device_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
)

func TestKernelCacheStats(t *testing.T) {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim), device.WithKernelCache(t.TempDir()),
		device.WithKernelCacheLimit(1<<20))
	require.NoError(t, err)
	defer dev.Close()
	src := device.Source{Name: "cached.cu", Code: `extern "C" __global__ void k(int* x) { x[0] = 1; }`,
		Sim: map[string]cuda.SimKernel{"k": func(*cuda.KernelCall) error { return nil }}}
	for range 3 {
		m, err := dev.Compile(ctx, src)
		require.NoError(t, err)
		require.NoError(t, m.Close(ctx))
	}
	st := dev.Stats().KernelCache
	if st == (device.KernelCacheStats{}) {
		t.Skip("no NVRTC here: the simulator runs the Go kernels without compiling")
	}
	assert.Equal(t, device.KernelCacheStats{Hits: 2, Misses: 1, Writes: 1}, st)
}

func TestKernelCacheLimitNegative(t *testing.T) {
	_, err := device.Open(context.Background(), 0, device.WithBackend(device.BackendSim), device.WithKernelCacheLimit(-1))
	require.ErrorIs(t, err, device.ErrInvalidArgument)
	assert.ErrorContains(t, err, "WithKernelCacheLimit(-1)")
}
