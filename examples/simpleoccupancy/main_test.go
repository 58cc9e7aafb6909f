package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gpuactor/gpuactor/examples/internal/sample"
)

// TestRun runs the sample on the simulator with an array that is not a whole number of
// blocks.
func TestRun(t *testing.T) {
	if err := run(config{count: 100003, Flags: sample.Flags{Backend: "sim"}}); err != nil {
		t.Fatal(err)
	}
}

func TestCoutFormatsAsTheCSample(t *testing.T) {
	assert.Equal(t, "50", cout(50))
	assert.Equal(t, "100", cout(100))
	assert.Equal(t, "0.012288", cout(0.012288))
	assert.Equal(t, "3.14159", cout(3.14159265))
	assert.Equal(t, "1e+06", cout(1e6))
}
