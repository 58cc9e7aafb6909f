package streams_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// kernels used by the stream tests, with their Go twins for the simulator.
const testSource = testdev.AddU32 + `
extern "C" __global__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
}
`

var testSim = map[string]cuda.SimKernel{
	"add_u32": testdev.AddU32Sim,
	"spin": func(c *cuda.KernelCall) error {
		time.Sleep(time.Duration(c.Int64(0)/1_000_000) * time.Millisecond) // ~1 ms per 1e6 cycles
		return nil
	},
}

type fixture struct {
	ctx  context.Context
	dev  *device.Device
	add  *device.Kernel
	spin *device.Kernel
	opts []device.Option
}

// eachBackend runs fn on the simulator and on the GPU (skipped without one, failed without
// one when GPUACTOR_REQUIRE_GPU=1).
func eachBackend(t *testing.T, fn func(t *testing.T, f *fixture)) {
	run := func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := testdev.Open(t, ctx, opts)
		mod, err := dev.Compile(ctx, device.Source{Name: "streams_test.cu", Code: testSource, Sim: testSim})
		require.NoError(t, err)
		add, err := mod.Kernel(ctx, "add_u32")
		require.NoError(t, err)
		spin, err := mod.Kernel(ctx, "spin")
		require.NoError(t, err)
		fn(t, &fixture{ctx: ctx, dev: dev, add: add, spin: spin, opts: opts})
	}
	testdev.Backends(t, run)
}

func (f *fixture) stream(t *testing.T, opts ...streams.Option) *streams.Stream {
	t.Helper()
	s, err := streams.New(f.ctx, f.dev, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

func (f *fixture) buffer(t *testing.T, n uint64) *device.Buffer {
	t.Helper()
	b, err := f.dev.MallocBytes(f.ctx, n)
	require.NoError(t, err)
	return b
}

func (f *fixture) pinned(t *testing.T, n uint64) *device.HostBuffer {
	t.Helper()
	h, err := f.dev.MallocPinnedBytes(f.ctx, n)
	require.NoError(t, err)
	return h
}

// spinCycles is about ms milliseconds of GPU clock (≈1.7 GHz on an H100; the simulator sleeps).
func spinCycles(ms int) int64 { return int64(ms) * 1_700_000 }

func one() cuda.LaunchConfig { return cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)} }

func await(t *testing.T, ctx context.Context, f *streams.Future) {
	t.Helper()
	require.NoError(t, f.Wait(ctx))
}
