package main

import (
	"testing"

	"github.com/gpuactor/gpuactor/examples/internal/sample"
)

// TestRun runs the sample on the simulator with a small array that is not a whole number
// of blocks.
func TestRun(t *testing.T) {
	if err := run(config{n: 10007, inc: 26, Flags: sample.Flags{Backend: "sim"}}); err != nil {
		t.Fatal(err)
	}
}
