// Package testdev is what the tests of the module's device-using packages share: a bounded
// context, whether the cuda backend sees a device, running a test once per backend, and
// opening a second device.
package testdev

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testgpu"
)

// Ctx is a context that ends with the test, or after two minutes: a hung GPU call fails the
// test instead of the whole run's timeout.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// GPU reports whether the cuda backend sees a device.
func GPU() bool {
	n, err := device.Count(context.Background(), device.WithBackend(device.BackendCUDA))
	return err == nil && n > 0
}

// Backends runs fn as subtest "sim", on a simulated machine of its own (every Open of the
// subtest shares it, as one process sees one set of GPUs), and as "cuda" on the GPU: skipped
// without one, failed without one when GPUACTOR_REQUIRE_GPU=1. Each has a kernel cache of its
// own.
func Backends(t *testing.T, fn func(t *testing.T, opts []device.Option)) {
	t.Run("sim", func(t *testing.T) {
		fn(t, []device.Option{device.WithSimulator(device.NewSimulator()), device.WithKernelCache(t.TempDir())})
	})
	t.Run("cuda", func(t *testing.T) {
		testgpu.Need(t, GPU(), "the cuda backend sees no device")
		fn(t, []device.Option{device.WithBackend(device.BackendCUDA), device.WithKernelCache(t.TempDir())})
	})
}

// Second opens device 1 of the machine opts describe, closed with the test; it skips the test
// when there is no second device.
func Second(t *testing.T, ctx context.Context, opts []device.Option) *device.Device {
	t.Helper()
	n, err := device.Count(ctx, opts...)
	require.NoError(t, err)
	if n < 2 {
		t.Skip("needs two devices")
	}
	dev, err := device.Open(ctx, 1, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, dev.Close()) })
	return dev
}

// AddU32 is the CUDA source of add_u32(p, v, n), which adds v to each of the n words at p: the
// kernel the packages' tests launch. A test module adds its own kernels after it.
const AddU32 = `
extern "C" __global__ void add_u32(unsigned int* p, unsigned int v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += v;
}
`

// AddU32Sim is add_u32's twin for the simulator.
func AddU32Sim(c *device.KernelCall) error {
	n := int(c.Int32(2))
	p := device.SimSlice[uint32](c, 0, n)
	v := c.Uint32(1)
	for i := range p {
		p[i] += v
	}
	return nil
}

// Open opens device 0 of the machine opts describe, closed (and checked) with the test.
func Open(t testing.TB, ctx context.Context, opts []device.Option) *device.Device {
	t.Helper()
	dev, err := device.Open(ctx, 0, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, dev.Close()) })
	return dev
}
