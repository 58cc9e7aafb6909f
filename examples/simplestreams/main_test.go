package main

import (
	"testing"

	"github.com/gpuactor/gpuactor/examples/internal/sample"
)

// TestRun runs the sample on the simulator with a small array that does not split evenly.
func TestRun(t *testing.T) {
	c := config{n: 10007, nstreams: 4, iterations: 5, reps: 3, factor: 5, Flags: sample.Flags{Backend: "sim"}}
	if err := run(c); err != nil {
		t.Fatal(err)
	}
}
