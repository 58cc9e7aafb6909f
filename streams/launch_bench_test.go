package streams_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/nullgpu"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testgpu"
	"github.com/gpuactor/gpuactor/streams"
)

// BenchmarkLaunch: g goroutines, each with a stream of its own, launch an empty kernel with up
// to 64 futures in flight, awaiting the oldest before the next (bench's stream_launch and
// stream_launch_8 rows). One op is one launch.
func BenchmarkLaunch(b *testing.B) {
	for _, g := range []int{1, 8} {
		b.Run(fmt.Sprintf("cuda/g=%d", g), func(b *testing.B) {
			testgpu.Need(b, testdev.GPU(), "the cuda backend sees no device")
			dev, err := device.Open(context.Background(), 0, device.WithBackend(device.BackendCUDA))
			require.NoError(b, err)
			benchLaunch(b, dev, g)
		})
		// gpuactor's own cost per launch: the same calls with the GPU's part free (nullgpu).
		b.Run(fmt.Sprintf("null/g=%d", g), func(b *testing.B) {
			dev := testdev.OpenOn(b, context.Background(), nullgpu.New())
			benchLaunch(b, dev, g)
		})
	}
}

func benchLaunch(b *testing.B, dev *device.Device, g int) {
	ctx := context.Background()
	defer dev.Close()
	mod, err := dev.Compile(ctx, device.Source{Name: "empty.cu", Code: `extern "C" __global__ void empty() {}`,
		Sim: map[string]cuda.SimKernel{"empty": func(*cuda.KernelCall) error { return nil }}})
	require.NoError(b, err)
	k, err := mod.Kernel(ctx, "empty")
	require.NoError(b, err)
	ss := make([]*streams.Stream, g)
	for i := range ss {
		ss[i], err = streams.New(ctx, dev)
		require.NoError(b, err)
	}
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	per := b.N / g
	for _, s := range ss {
		wg.Go(func() {
			const window = 64
			var ring [window]*streams.Future
			for i := range per {
				if f := ring[i%window]; f != nil {
					if err := f.Wait(ctx); err != nil {
						b.Error(err)
						return
					}
				}
				ring[i%window] = s.Launch(ctx, k, cfg)
			}
			for _, f := range ring {
				if f != nil {
					_ = f.Wait(ctx)
				}
			}
		})
	}
	wg.Wait()
}
