// Package testdev is what the tests of the module's device-using packages share: a bounded
// context, whether the cuda backend sees a device, and running a test once per backend.
package testdev

import (
	"context"
	"testing"
	"time"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testgpu"
)

// Ctx is a context that ends with the test, or after two minutes: a hung GPU call fails the
// test instead of the whole run's timeout.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// GPU reports whether the cuda backend sees a device.
func GPU() bool {
	n, err := device.Count(context.Background(), device.WithBackend(device.BackendCUDA))
	return err == nil && n > 0
}

// Backends runs fn as subtest "sim", on a simulated machine of its own (every Open of the
// subtest shares it, as one process sees one set of GPUs), and as "cuda" on the GPU: skipped
// without one, failed without one when GPUACTOR_REQUIRE_GPU=1. Each has a kernel cache of its
// own.
func Backends(t *testing.T, fn func(t *testing.T, opts []device.Option)) {
	t.Run("sim", func(t *testing.T) {
		fn(t, []device.Option{device.WithSimulator(device.NewSimulator()), device.WithKernelCache(t.TempDir())})
	})
	t.Run("cuda", func(t *testing.T) {
		testgpu.Need(t, GPU(), "the cuda backend sees no device")
		fn(t, []device.Option{device.WithBackend(device.BackendCUDA), device.WithKernelCache(t.TempDir())})
	})
}
