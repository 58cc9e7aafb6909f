package device_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/cudart"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testgpu"
	"github.com/gpuactor/gpuactor/streams"
)

// A cubin loaded without its source still has its arguments checked on 12.4 and later: the
// runtime gives the parameters' sizes (cudaFuncGetParamInfo).
func TestCubinArgumentsAreCheckedBySize(t *testing.T) {
	testgpu.Need(t, testdev.GPU(), "the cuda backend sees no device")
	ctx := testdev.Ctx(t)
	dev := openDev(t, []device.Option{device.WithBackend(device.BackendCUDA), device.WithKernelCache(t.TempDir())})
	props := dev.Properties()
	if props.RuntimeVersion < 12040 {
		t.Skipf("runtime %d has no cudaFuncGetParamInfo", props.RuntimeVersion)
	}
	nv, err := cudart.LoadNVRTC()
	require.NoError(t, err)
	prog, err := nv.Compile(saxpySource, "saxpy_cubin.cu", []string{fmt.Sprintf("--gpu-architecture=sm_%d", props.ComputeCapability.Arch())})
	require.NoError(t, err)
	require.NotEmpty(t, prog.Cubin)
	mod, err := dev.LoadModule(ctx, "saxpy_cubin", prog.Cubin, device.Cubin, nil)
	require.NoError(t, err)
	k, err := mod.Kernel(ctx, "saxpy")
	require.NoError(t, err)

	sizes, err := k.ParamSizes(ctx)
	require.NoError(t, err)
	assert.Equal(t, []int{4, 4, 8, 8}, sizes) // int n, float a, const float* x, float* y
	assert.Equal(t, []cuda.ArgKind{cuda.Int32, cuda.Int32, cuda.Int64, cuda.Int64}, k.Params())
	name, err := k.RuntimeName(ctx)
	require.NoError(t, err)
	assert.Equal(t, "saxpy", name)

	const n = 1000
	x, y := mustMalloc(t, dev, 4*n), mustMalloc(t, dev, 4*n)
	s := streams.Default(dev)
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(4), Block: cuda.Dim(256)}
	err = s.Launch(ctx, k, cfg, int32(n), float32(2), x).Wait(ctx)
	require.ErrorIs(t, err, device.ErrKernelArgs)
	assert.Contains(t, err.Error(), "takes 4 argument(s)")
	err = s.Launch(ctx, k, cfg, int64(n), float32(2), x, y).Wait(ctx)
	require.ErrorIs(t, err, device.ErrKernelArgs)
	assert.Contains(t, err.Error(), "4-byte value")

	upload(t, x, []float32{1, 2, 3})
	upload(t, y, []float32{10, 20, 30})
	require.NoError(t, s.Launch(ctx, k, cfg, int32(3), float32(2), x, y).Wait(ctx))
	got := make([]float32, 3)
	download(t, got, device.Range(y, 0, 12))
	assert.Equal(t, []float32{12, 24, 36}, got)
}
