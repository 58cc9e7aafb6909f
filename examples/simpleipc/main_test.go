package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/examples/internal/sample"
)

// TestSimWaives: the simulator shares nothing between processes, so the sample prints the
// C sample's waiver line and ends without error or child processes.
func TestSimWaives(t *testing.T) {
	err := parent(sample.Flags{Backend: "sim"})
	require.ErrorIs(t, err, errWaived)
	_, statErr := os.Stat(shmPath(os.Getpid()))
	require.True(t, os.IsNotExist(statErr), "the slab is removed")
}
