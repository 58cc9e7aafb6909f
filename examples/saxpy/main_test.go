package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
)

// On the simulator the run is checked and timed, but prints no throughput: the simulator's
// µs and GB/s are the CPU's, not a GPU's.
func TestRunOnTheSimulatorPrintsNoThroughput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out, 4096, 4, 3, sample.Flags{Backend: "sim"}))
	got := out.String()
	assert.Contains(t, got, "4 goroutines × 3 launches of 4096 elements")
	assert.Contains(t, got, "sim backend: timing not meaningful")
	assert.NotContains(t, got, "µs per launch")
	assert.NotContains(t, got, "GB/s")
	assert.Contains(t, got, "verified 16384 elements")
}

// On a GPU it prints µs per launch and GB/s, from the elapsed time.
func TestReportOnAGPUPrintsThroughput(t *testing.T) {
	var out bytes.Buffer
	report(&out, device.BackendCUDA, 1000, 10, 10, 100*time.Millisecond)
	got := out.String()
	assert.Contains(t, got, "1000.0 µs per launch")     // 100 ms over 100 launches
	assert.Contains(t, got, "0.01 GB/s kernel traffic") // 100 launches × 12 kB over 0.1 s
	assert.NotContains(t, got, "not meaningful")
}

func TestRunRefusesBadFlags(t *testing.T) {
	require.ErrorContains(t, run(&bytes.Buffer{}, 0, 1, 1, sample.Flags{Backend: "sim"}), "must be positive")
}
