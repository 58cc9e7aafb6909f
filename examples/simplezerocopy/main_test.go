package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
)

// quiet keeps the simulated device's actor from spinning, which the race detector slows.
var quiet = []device.Option{device.WithActorTuning(device.ActorTuning{Spin: device.NoSpin, BusySpin: device.NoSpin, AwaitSpin: device.NoSpin})}

// TestRun runs the sample on the simulator with vectors that fill no block evenly, in memory
// from cudaHostAlloc and in registered Go memory.
func TestRun(t *testing.T) {
	for _, generic := range []bool{false, true} {
		c := config{n: 1000, useGenericMemory: generic, Flags: sample.Flags{Backend: "sim"}, opts: quiet}
		require.NoError(t, run(c))
	}
}

// TestRunInvalidDevice runs it with -device naming a device the machine lacks: the C sample
// says so and uses device 0.
func TestRunInvalidDevice(t *testing.T) {
	c := config{n: 1000, deviceSet: true, Flags: sample.Flags{Ordinal: 7, Backend: "sim"}, opts: quiet}
	require.NoError(t, run(c))
}

// TestNorms checks the pass condition's inputs: a right sum has no error, a wrong one has.
func TestNorms(t *testing.T) {
	a, b := []float32{3, 1}, []float32{1, 2}
	errorNorm, refNorm := norms(a, b, []float32{4, 3})
	require.Zero(t, errorNorm)
	require.Equal(t, float32(5), refNorm)
	errorNorm, _ = norms(a, b, []float32{4, 0})
	require.Equal(t, float32(3), errorNorm)
}
