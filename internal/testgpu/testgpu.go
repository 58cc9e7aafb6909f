// Package testgpu decides whether a test that needs a real GPU runs, skips or fails.
//
// Without a GPU such tests skip, unless GPUACTOR_REQUIRE_GPU=1 (set by the GPU test runner),
// where a missing GPU is a failure: a GPU run must never pass by skipping.
package testgpu

import (
	"os"
	"testing"
)

// Required reports whether the environment demands a GPU (GPUACTOR_REQUIRE_GPU=1).
func Required() bool { return os.Getenv("GPUACTOR_REQUIRE_GPU") == "1" }

// Need skips t (or fails it, when a GPU is required) unless available is true.
func Need(t testing.TB, available bool, why string) {
	t.Helper()
	if available {
		return
	}
	if Required() {
		t.Fatalf("GPUACTOR_REQUIRE_GPU=1 but no GPU is usable: %s", why)
	}
	t.Skipf("no GPU: %s", why)
}
