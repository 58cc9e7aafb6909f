package main

import "testing"

// TestRun runs the sample on the simulator (two devices) with small workloads.
func TestRun(t *testing.T) {
	if err := run(config{workers: 5, n: 1001, backend: "sim"}); err != nil {
		t.Fatal(err)
	}
}
