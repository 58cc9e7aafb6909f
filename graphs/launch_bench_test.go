package graphs_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/testgpu"
	"github.com/gpuactor/gpuactor/streams"
)

// BenchmarkLaunch: Exec.Launch of a graph of one empty kernel with up to 64 launches in
// flight, each awaited in turn: the per-launch cost of the path from a caller to
// cudaGraphLaunch and of the future that completes when the GPU has run it (bench's
// graph_launch and graph_node rows compare it with C++).
func BenchmarkLaunch(b *testing.B) {
	run := func(b *testing.B, opts []device.Option) {
		ctx := context.Background()
		dev, err := device.Open(ctx, 0, opts...)
		require.NoError(b, err)
		defer dev.Close()
		mod, err := dev.Compile(ctx, device.Source{Name: "empty.cu", Code: `extern "C" __global__ void empty() {}`,
			Sim: map[string]device.SimKernel{"empty": func(*device.KernelCall) error { return nil }}})
		require.NoError(b, err)
		k, err := mod.Kernel(ctx, "empty")
		require.NoError(b, err)
		g, err := graphs.New(ctx, dev)
		require.NoError(b, err)
		defer g.Destroy(ctx)
		_, err = g.AddKernel(ctx, graphs.After(), k, device.Config{Grid: device.Dim(1), Block: device.Dim(1)})
		require.NoError(b, err)
		x, err := g.Instantiate(ctx)
		require.NoError(b, err)
		defer x.Destroy(ctx)
		s, err := streams.New(ctx, dev)
		require.NoError(b, err)
		defer s.Destroy(ctx)
		const window = 64
		var ring [window]*streams.Future
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			if f := ring[i%window]; f != nil {
				if _, err := f.Await(ctx); err != nil {
					b.Fatal(err)
				}
			}
			ring[i%window] = x.Launch(ctx, s)
		}
		for _, f := range ring {
			if f != nil {
				if _, err := f.Await(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.Run("sim", func(b *testing.B) { run(b, []device.Option{device.WithSimulator(device.NewSimulator())}) })
	b.Run("cuda", func(b *testing.B) {
		testgpu.Need(b, gpuAvailable(), "the cuda backend sees no device")
		run(b, []device.Option{device.WithBackend(device.BackendCUDA)})
	})
}
