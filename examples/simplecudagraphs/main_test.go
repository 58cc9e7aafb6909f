package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
)

// quiet keeps the simulated device's actor from spinning, which the race detector slows.
var quiet = []device.Option{device.WithActorTuning(device.ActorTuning{Spin: device.NoSpin, BusySpin: device.NoSpin, AwaitSpin: device.NoSpin})}

// TestRun runs the sample on the simulator with an input that fills no block evenly.
func TestRun(t *testing.T) {
	c := config{n: 100003, Flags: sample.Flags{Backend: "sim"}, opts: quiet}
	require.NoError(t, run(c))
}

// TestRunTiny runs it with fewer elements than reduce has threads, so most threads add none.
func TestRunTiny(t *testing.T) {
	c := config{n: 5, Flags: sample.Flags{Backend: "sim"}, opts: quiet}
	require.NoError(t, run(c))
}

// TestCallbackCheck checks that the check wants one sum per launch, each near the CPU's.
func TestCallbackCheck(t *testing.T) {
	cb := &callback{name: "test"}
	cb.seen = []float64{1, 1, 1}
	require.NoError(t, cb.check("ok", 1+1e-12))
	require.ErrorContains(t, cb.check("none", 1), "ran 0 times")
	cb.seen = []float64{1, 0, 1}
	require.ErrorContains(t, cb.check("reset", 1), "launch 1")
}
