package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
)

// quiet keeps the simulated device's actor from spinning, which the race detector slows.
var quiet = []device.Option{device.WithActorTuning(device.ActorTuning{Spin: device.NoSpin, BusySpin: device.NoSpin, AwaitSpin: device.NoSpin})}

// TestRun runs the sample's six variants on the simulator with arrays that fill no block
// evenly, with and without -device.
func TestRun(t *testing.T) {
	for _, deviceSet := range []bool{false, true} {
		c := config{n: 10007, deviceSet: deviceSet, Flags: sample.Flags{Backend: "sim"}, opts: quiet}
		require.NoError(t, run(c))
	}
}

// TestRunUncovered runs it with a size the C sample's block count leaves short: 512 blocks of
// 512 threads for 512² + 1 elements. Every check fails, as in C.
func TestRunUncovered(t *testing.T) {
	c := config{n: threadsPerBlock*threadsPerBlock + 1, Flags: sample.Flags{Backend: "sim"}, opts: quiet}
	err := run(c)
	require.ErrorContains(t, err, "validation failed: in a stream; in a stream-captured graph")
	require.ErrorContains(t, err, "with d_negSquare freed in a different graph")
}

// TestBlocks checks the C sample's block count, quirk included.
func TestBlocks(t *testing.T) {
	require.Equal(t, uint32(15626), blocks(numElements))
	require.Equal(t, uint32(20), blocks(10007))
	require.Equal(t, uint32(512), blocks(threadsPerBlock*threadsPerBlock+1))
}

// TestWithinVariance checks the element check at and around its threshold, and with a zero
// reference.
func TestWithinVariance(t *testing.T) {
	require.True(t, withinVariance(-0.25, -0.25))
	require.True(t, withinVariance(-1.0009, -1))  // (0.0009)² = 8.1e-7
	require.False(t, withinVariance(-1.0011, -1)) // (0.0011)² = 1.21e-6
	require.True(t, withinVariance(0, 0), "0/0 is NaN, which is not above the threshold")
	require.False(t, withinVariance(1, 0))
}
