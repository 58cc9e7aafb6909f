package device_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// BenchmarkLaunchRoundTrip is one empty launch waited for, in process and on an isolated
// device, on the simulator (and on the GPU where there is one): what crossing to the worker
// adds to a round trip.
func BenchmarkLaunchRoundTrip(b *testing.B) {
	inProcessAndIsolated(b, func(b *testing.B, dev *device.Device) {
		ctx := testdev.Ctx(b)
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

// inProcessAndIsolated runs fn on device 0 opened in process and isolated, on the simulator,
// or on the GPU where there is one.
func inProcessAndIsolated(b *testing.B, fn func(b *testing.B, dev *device.Device)) {
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
			fn(b, openDev(b, opts))
		})
	}
}

// BenchmarkRequestAllocations is the allocations of one request of the service example,
// in process and on an isolated device: three buffers of 16 KiB allocated in stream order, two
// filled from the host, the third set and read back and waited for, then all three freed in
// stream order. An isolated device's allocations are calls to its worker (the answer is the
// address); the actor starts them and collects their addresses together.
func BenchmarkRequestAllocations(b *testing.B) {
	inProcessAndIsolated(b, func(b *testing.B, dev *device.Device) {
		ctx := testdev.Ctx(b)
		s, err := streams.New(ctx, dev)
		require.NoError(b, err)
		defer s.Close(ctx)
		const n = 4096 // 16 KiB of float32
		in, out := make([]float32, n), make([]float32, n)
		request := func() error {
			var bufs [3]*alloc.Buffer[float32]
			for i := range bufs {
				if bufs[i], _, err = alloc.MallocAsync[float32](ctx, s, n); err != nil {
					return err
				}
			}
			streams.CopyToDevice(ctx, s, bufs[0], in)
			streams.CopyToDevice(ctx, s, bufs[1], in)
			s.Memset(ctx, bufs[2], 0)
			if err := streams.CopyFromDevice(ctx, s, out, bufs[2]).Wait(ctx); err != nil {
				return err
			}
			for _, buf := range bufs {
				buf.CloseOn(ctx, nil)
			}
			return nil
		}
		require.NoError(b, request())
		b.ResetTimer()
		for b.Loop() {
			if err := request(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
