package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/sim"
)

// TestRun runs the sample on simulated machines of four GPUs, which split the input evenly,
// and of three, whose first two take one element more.
func TestRun(t *testing.T) {
	for _, n := range []int{4, 3} {
		t.Run(fmt.Sprintf("%d devices", n), func(t *testing.T) {
			c := config{Flags: sample.Flags{Backend: "sim"}, sim: sim.New(sim.WithDevices(n))}
			require.NoError(t, run(c))
		})
	}
}

// TestCompare checks the pass condition at and around its threshold.
func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		gpu  float32
		cpu  float64
		pass bool
	}{
		{16777304, 16777294.395033, true}, // what four GPUs give
		{1000, 1000.00999, true},          // just under 1e-5
		{1000, 1000.01001, false},         // just over
		{0, 0, false},                     // NaN
	} {
		_, err := compare(tc.gpu, tc.cpu)
		require.Equal(t, tc.pass, err == nil, "GPU %v, CPU %v: %v", tc.gpu, tc.cpu, err)
	}
}

// TestPhases: with -phases, every GPU's phases are written, in the order they ran.
func TestPhases(t *testing.T) {
	var out strings.Builder
	c := config{Flags: sample.Flags{Backend: "sim"}, sim: sim.New(sim.WithDevices(2)), phases: &out}
	require.NoError(t, run(c))
	for _, d := range []string{"device 0:", "device 1:"} {
		require.Contains(t, out.String(), "phases: "+d)
	}
	require.Regexp(t, `awaited [0-9.]+ ms; summed [0-9.]+ ms; cudaFreeHost [0-9.]+ ms; cudaFree\(sum\) [0-9.]+ ms; cudaFree\(data\) [0-9.]+ ms; watermarks [0-9]+, queries [0-9]+`, out.String())
	require.Contains(t, out.String(), "phases: all, the streams destroyed:")
}
