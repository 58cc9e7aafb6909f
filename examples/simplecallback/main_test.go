package main

import (
	"testing"

	"github.com/gpuactor/gpuactor/examples/internal/sample"
)

// TestRun runs the sample on the simulator (two devices) with small workloads.
func TestRun(t *testing.T) {
	if err := run(config{workers: 5, n: 1001, Flags: sample.Flags{Backend: "sim"}}); err != nil {
		t.Fatal(err)
	}
}
