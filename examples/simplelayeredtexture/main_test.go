package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
)

// quiet keeps the simulated device's actor from spinning, which the race detector slows.
var quiet = []device.Option{device.WithActorTuning(device.ActorTuning{Spin: device.NoSpin, BusySpin: device.NoSpin, AwaitSpin: device.NoSpin})}

// TestRun runs the sample on the simulator, smaller than the C sample's 512×512×5.
func TestRun(t *testing.T) {
	require.NoError(t, run(config{width: 64, height: 32, layers: 3, Flags: sample.Flags{Backend: "sim"}, opts: quiet}))
}

func TestCompareData(t *testing.T) {
	require.Equal(t, -1, compareData([]float32{1, 2}, []float32{1.004, 2}, 5e-3))
	require.Equal(t, 1, compareData([]float32{1, 2}, []float32{1, 2.01}, 5e-3))
}
