package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
)

// quiet keeps the simulated device's actor from spinning, which the race detector slows.
var quiet = []device.Option{device.WithActorTuning(device.ActorTuning{Spin: device.NoSpin, BusySpin: device.NoSpin, AwaitSpin: device.NoSpin})}

// TestRun runs the sample on the simulator with a small array, with each kind of host memory.
func TestRun(t *testing.T) {
	for _, cudaMallocHost := range []bool{false, true} {
		c := config{n: 4 * threads * 8, nstreams: 4, nreps: 3, useCudaMallocHost: cudaMallocHost,
			Flags: sample.Flags{Backend: "sim"}, opts: quiet}
		require.NoError(t, run(c))
	}
}

// TestRunStreams runs it with a number of streams other than the default.
func TestRunStreams(t *testing.T) {
	c := config{n: 3 * threads * 2, nstreams: 3, nreps: 2, Flags: sample.Flags{Backend: "sim"}, opts: quiet}
	require.NoError(t, run(c))
}

// TestRunBadSize checks that an array the launches would not cover is refused.
func TestRunBadSize(t *testing.T) {
	c := config{n: 4*threads + 1, nstreams: 4, nreps: 1, Flags: sample.Flags{Backend: "sim"}, opts: quiet}
	require.ErrorContains(t, run(c), "not a multiple")
}

// TestCheck checks that the check reports the first wrong element by its index in the array.
func TestCheck(t *testing.T) {
	require.NoError(t, check([]int32{7, 7, 7}, 10, 7))
	require.ErrorContains(t, check([]int32{7, 6, 5}, 10, 7), "element 11 is 6, want 7")
}
