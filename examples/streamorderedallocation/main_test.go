package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
)

// quiet keeps the simulated device's actor from spinning, which the race detector slows.
var quiet = []device.Option{device.WithActorTuning(device.ActorTuning{Spin: device.NoSpin, BusySpin: device.NoSpin, AwaitSpin: device.NoSpin})}

// TestRun runs the sample on the simulator with vectors that do not fill their last block.
func TestRun(t *testing.T) {
	c := config{n: 10007, iterations: 3, Flags: sample.Flags{Backend: "sim"}, opts: quiet}
	require.NoError(t, run(c))
}

// TestRunCompareMalloc runs it with the cudaMalloc loop as well.
func TestRunCompareMalloc(t *testing.T) {
	c := config{n: 4096, iterations: 2, compareMalloc: true, Flags: sample.Flags{Backend: "sim"}, opts: quiet}
	require.NoError(t, run(c))
}

// TestCheck checks that the check passes an exact sum and names the first wrong element.
func TestCheck(t *testing.T) {
	w := &work{a: []float32{1, 2, 3}, b: []float32{0.5, 0.25, 0.125}, out: []float32{1.5, 2.25, 3.125}}
	require.NoError(t, w.check("exact"))
	w.out[1] = 2.2500002 // within the norm's tolerance, but not exact
	require.ErrorContains(t, w.check("close"), "element 1")
	w.out[1] = 3
	require.ErrorContains(t, w.check("wrong"), "not below 1e-6")
}

// TestLaunchConfig checks the C sample's grid: ceil(n / 256.0f) blocks of 256.
func TestLaunchConfig(t *testing.T) {
	for n, blocks := range map[int]uint32{1: 1, 256: 1, 257: 2, 1048576: 4096} {
		w := &work{a: make([]float32, n)}
		require.Equal(t, blocks, w.launchConfig().Grid.X, "n = %d", n)
	}
}
