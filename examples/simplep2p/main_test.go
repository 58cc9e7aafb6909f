package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
)

// TestRun runs the sample on a simulated machine of two GPUs, linked as every simulated pair
// is.
func TestRun(t *testing.T) {
	c := config{Flags: sample.Flags{Backend: "sim"}, sim: device.NewSimulator(device.SimDevices(2))}
	require.NoError(t, run(c, "simplep2p"))
}

// TestWaived: one GPU is not enough; the sample waives, as the C sample does.
func TestWaived(t *testing.T) {
	c := config{Flags: sample.Flags{Backend: "sim"}, sim: device.NewSimulator(device.SimDevices(1))}
	require.ErrorIs(t, run(c, "simplep2p"), errWaived)
}

// TestVerify checks the pass condition and that it stops counting after a dozen errors.
func TestVerify(t *testing.T) {
	h := make([]float32, 3*4096)
	for i := range h {
		h[i] = float32(i%4096) * 4
	}
	require.Zero(t, verify(h))
	h[5] = 1
	require.Equal(t, 1, verify(h))
	for i := range 100 {
		h[i] = -1
	}
	require.Equal(t, 12, verify(h))
}
