package device_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// saxpySource is the kernel most tests launch, with its Go twin for the simulator.
const saxpySource = `
extern "C" __global__ void saxpy(int n, float a, const float* __restrict__ x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void fill_u32(unsigned int* out, unsigned int value, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value + (unsigned int)i;
}

extern "C" __global__ void empty() {}
`

var saxpySim = map[string]cuda.SimKernel{
	"saxpy": func(c *cuda.KernelCall) error {
		n := int(c.Int32(0))
		a := c.Float32(1)
		x := cuda.SimSlice[float32](c, 2, n)
		y := cuda.SimSlice[float32](c, 3, n)
		for i := range min(uint64(n), c.Threads()) {
			y[i] = float32(a*x[i]) + y[i] // no fused multiply-add, like the GPU built with --fmad=false
		}
		return nil
	},
	"fill_u32": func(c *cuda.KernelCall) error {
		n := c.Int64(2)
		v := c.Uint32(1)
		out := cuda.SimSlice[uint32](c, 0, int(min(n, int64(c.Threads()))))
		for i := range out {
			out[i] = v + uint32(i)
		}
		return nil
	},
	"empty": func(*cuda.KernelCall) error { return nil },
}

func saxpyModule(t testing.TB, dev *device.Device) *device.Module {
	t.Helper()
	ctx := testdev.Ctx(t)
	mod, err := dev.Compile(ctx, device.Source{Name: "saxpy_test.cu", Code: saxpySource, Sim: saxpySim})
	require.NoError(t, err)
	return mod
}

// openDev opens device 0 with opts and closes it when the test ends.
func openDev(t testing.TB, opts []device.Option) *device.Device {
	t.Helper()
	dev, err := device.Open(testdev.Ctx(t), 0, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, dev.Close()) })
	return dev
}

func mustMalloc(t testing.TB, dev *device.Device, n uint64) *device.Buffer {
	t.Helper()
	b, err := dev.MallocBytes(testdev.Ctx(t), n)
	require.NoError(t, err)
	return b
}

// upload copies xs into dst on its device's own stream and waits for it.
func upload[T cuda.Numeric](t testing.TB, dst device.Mem, xs []T) {
	t.Helper()
	ctx := testdev.Ctx(t)
	require.NoError(t, streams.CopyToDevice(ctx, streams.Default(device.Range(dst, 0, 0).Buffer().Device()), dst, xs).Wait(ctx))
}

// download fills xs from src on its device's own stream and waits for it.
func download[T cuda.Numeric](t testing.TB, xs []T, src device.Mem) {
	t.Helper()
	ctx := testdev.Ctx(t)
	require.NoError(t, streams.CopyFromDevice(ctx, streams.Default(device.Range(src, 0, 0).Buffer().Device()), xs, src).Wait(ctx))
}
