package main

import "testing"

// TestRun runs the sample on the simulator with an array that fills no block evenly.
func TestRun(t *testing.T) {
	if err := run(config{n: 100003, backend: "sim"}); err != nil {
		t.Fatal(err)
	}
}
