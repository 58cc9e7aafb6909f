package main

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testgpu"
)

// On the simulator the example skips cleanly: cuBLAS needs a GPU.
func TestRunSimSkips(t *testing.T) {
	err := run(64, sample.Flags{Backend: "sim"})
	var s skipped
	require.True(t, errors.As(err, &s), "want a skip, got %v", err)
	require.Contains(t, s.why, "sim")
}

// On a GPU the product matches the Go sgemm; a missing libcublas skips, except under
// GPUACTOR_REQUIRE_GPU=1, where the GPU host is expected to have the toolkit.
func TestRunGPU(t *testing.T) {
	testgpu.Need(t, testdev.GPU(), "the cuda backend sees no device")
	err := run(512, sample.Flags{Backend: "cuda"})
	var s skipped
	if errors.As(err, &s) && !testgpu.Required() {
		t.Skip(s.why)
	}
	require.NoError(t, err)
}
