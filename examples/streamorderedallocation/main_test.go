package main

import (
	"testing"

	"github.com/gpuactor/gpuactor/examples/internal/sample"
)

// TestRun runs the sample on the simulator with a vector that does not fill its last block.
func TestRun(t *testing.T) {
	if err := run(config{n: 10007, iterations: 3, Flags: sample.Flags{Backend: "sim"}}); err != nil {
		t.Fatal(err)
	}
}
