package streams_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testfix"
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

// fixture is the shared one with this package's kernels.
type fixture struct {
	*testfix.Fixture
	add  *device.Kernel
	spin *device.Kernel
}

// eachBackend runs fn on every backend (see testfix.EachBackend).
func eachBackend(t *testing.T, fn func(t *testing.T, f *fixture)) {
	src := device.Source{Name: "streams_test.cu", Code: testSource, Sim: testSim}
	testfix.EachBackend(t, src, func(t *testing.T, tf *testfix.Fixture) {
		fn(t, &fixture{Fixture: tf, add: tf.Kernel(t, "add_u32"), spin: tf.Kernel(t, "spin")})
	})
}

func (f *fixture) pinned(t *testing.T, n uint64) *device.HostBuffer {
	t.Helper()
	h, err := f.Dev.MallocPinnedBytes(f.Ctx, n)
	require.NoError(t, err)
	return h
}

// spinCycles is about ms milliseconds of GPU clock (≈1.7 GHz on an H100; the simulator sleeps).
func spinCycles(ms int) int64 { return int64(ms) * 1_700_000 }

func one() cuda.LaunchConfig { return cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)} }
