package main

import (
	"testing"

	"github.com/gpuactor/gpuactor/examples/internal/sample"
)

// TestRun runs the sample on the simulator with an array that fills no block evenly.
func TestRun(t *testing.T) {
	if err := run(config{n: 100003, Flags: sample.Flags{Backend: "sim"}}); err != nil {
		t.Fatal(err)
	}
}
