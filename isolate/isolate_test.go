package isolate_test

import (
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/isolate"
	"github.com/gpuactor/gpuactor/sim"
)

// The test binary is its isolated devices' worker: Main serves one there and returns here.
func TestMain(m *testing.M) {
	isolate.Main()
	if _, ok := os.LookupEnv("GORACE"); !ok {
		_ = os.Setenv("GORACE", "atexit_sleep_ms=0") // a race-detector worker would sleep at exit
	}
	os.Exit(m.Run())
}

// The worker makes a simulator like the parent's: the options cross to it, faults included.
func TestWorkerGetsTheSimulatorsOptions(t *testing.T) {
	ctx := testdev.Ctx(t)
	s := sim.New(sim.WithDevices(3), sim.WithMemory(1<<30), sim.WithConfinedFaults())
	dev, err := device.Open(ctx, 2, device.WithSimulator(s), device.WithKernelCache(""),
		device.Isolated(isolate.WithStderr(io.Discard), isolate.Option{}))
	require.NoError(t, err, "a zero Option changes nothing")
	defer dev.Close()
	require.True(t, dev.Isolated())
	assert.Positive(t, dev.WorkerPID())
	assert.Equal(t, uint64(1<<30), dev.Properties().TotalMemory)
	b, err := dev.MallocBytes(ctx, 64)
	require.NoError(t, err)
	require.NoError(t, b.Close(ctx))
}

func TestWorkerThatCannotStart(t *testing.T) {
	ctx := testdev.Ctx(t)
	_, err := device.Open(ctx, 0, device.WithSimulator(sim.New()),
		device.Isolated(isolate.WithBinary("/nonexistent/worker"), isolate.WithStderr(io.Discard)))
	require.ErrorIs(t, err, isolate.ErrWorkerStart)
	require.ErrorContains(t, err, "isolate.Main")
}
