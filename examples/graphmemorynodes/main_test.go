package main

import "testing"

// TestRun runs the sample on the simulator with arrays that fill no block evenly.
func TestRun(t *testing.T) {
	if err := run(config{n: 10007, launches: 5, backend: "sim"}); err != nil {
		t.Fatal(err)
	}
}
