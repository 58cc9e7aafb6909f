package main

import (
	"testing"

	"github.com/gpuactor/gpuactor/examples/internal/sample"
)

// TestRun runs the sample on the simulator with arrays that fill no block evenly.
func TestRun(t *testing.T) {
	if err := run(config{n: 10007, launches: 5, Flags: sample.Flags{Backend: "sim"}}); err != nil {
		t.Fatal(err)
	}
}
