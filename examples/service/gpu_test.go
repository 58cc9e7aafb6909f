package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/gpuactor/gpuactor/device"
)

// needGPUs skips t without n CUDA devices, or fails it where the GPU test runner demands them
// (GPUACTOR_REQUIRE_GPU=1, as internal/testgpu reads it: a GPU run must never pass by skipping).
func needGPUs(t *testing.T, n int) {
	t.Helper()
	got, err := device.Count(context.Background(), device.WithBackend(device.BackendCUDA))
	if err == nil && got >= n {
		return
	}
	if os.Getenv("GPUACTOR_REQUIRE_GPU") == "1" {
		t.Fatalf("GPUACTOR_REQUIRE_GPU=1 but %d CUDA devices are usable (%v); the test needs %d", got, err, n)
	}
	t.Skipf("no GPU: %d CUDA devices (%v); the test needs %d", got, err, n)
}

// The service over every GPU, isolated, under load from 32 clients, takes a trapping kernel,
// and a kill -9 of a worker, on its last GPU: every request is answered and checked, the GPU
// is back in a new worker, every device is healthy after, and closed after shutdown.
func TestServiceSurvivesAFaultOnGPUs(t *testing.T) {
	needGPUs(t, 1)
	n, err := device.Count(context.Background(), device.WithBackend(device.BackendCUDA))
	if err != nil {
		t.Fatal(err)
	}
	for _, fault := range []string{faultPoison, faultKill} {
		t.Run(fault, func(t *testing.T) {
			c := testConfig(t)
			c.sim, c.backend, c.park = 0, string(device.BackendCUDA), false
			c.clients, c.size, c.perDevice, c.stagingMiB = 32, 64<<10, 4, 64
			c.duration, c.faultAfter = 3*time.Second, time.Second
			c.fault, c.faultDevice = fault, n-1
			checkSurvives(t, c, string(device.BackendCUDA))
		})
	}
}
