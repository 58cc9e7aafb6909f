package device_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// BenchmarkLaunchRoundTrip is one empty launch waited for, in process and on an isolated
// device, on the simulator (and on the GPU where there is one): what crossing to the worker
// adds to a round trip.
func BenchmarkLaunchRoundTrip(b *testing.B) {
	for _, iso := range []bool{false, true} {
		name := "in-process"
		if iso {
			name = "isolated"
		}
		b.Run(name, func(b *testing.B) {
			opts := []device.Option{device.WithBackend(device.BackendSim), device.WithKernelCache(b.TempDir())}
			if testdev.GPU() {
				opts[0] = device.WithBackend(device.BackendCUDA)
			}
			if iso {
				opts = append(opts, device.Isolated())
			}
			ctx := testdev.Ctx(b)
			dev := openDev(b, opts)
			mod := saxpyModule(b, dev)
			k, err := mod.Kernel(ctx, "empty")
			require.NoError(b, err)
			s := streams.Default(dev)
			one := cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}
			require.NoError(b, s.Launch(ctx, k, one).Wait(ctx))
			b.ResetTimer()
			for b.Loop() {
				if err := s.Launch(ctx, k, one).Wait(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
