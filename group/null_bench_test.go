package group_test

import (
	"context"
	"testing"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/internal/nullgpu"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// BenchmarkRoundTripNull: the bench's launch_roundtrip and group_roundtrip rows on the null
// backend (a GPU that has always finished), with the steps between them, so that the
// difference group_roundtrip − launch_roundtrip splits into its parts:
//
//   - default_stream: an empty launch on the device's own stream, awaited (launch_roundtrip);
//   - own_stream: the same on a stream of its own, as a group's job gets one;
//   - do_nop: a job that does nothing, through Do: the group's own cost;
//   - do: the launch as a job through Do (group_roundtrip).
func BenchmarkRoundTripNull(b *testing.B) {
	ctx := context.Background()
	dev := testdev.OpenOn(b, ctx, nullgpu.New())
	mod, err := dev.Compile(ctx, device.Source{Name: "empty.cu", Code: `extern "C" __global__ void empty() {}`,
		Sim: map[string]cuda.SimKernel{"empty": func(*cuda.KernelCall) error { return nil }}})
	if err != nil {
		b.Fatal(err)
	}
	empty, err := mod.Kernel(ctx, "empty")
	if err != nil {
		b.Fatal(err)
	}
	one := cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}
	work := func(ctx context.Context, _ *device.Device, s *streams.Stream) error {
		return s.Launch(ctx, empty, one).Wait(ctx)
	}
	b.Run("default_stream", func(b *testing.B) {
		s := streams.Default(dev)
		for b.Loop() {
			if err := work(ctx, dev, s); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("own_stream", func(b *testing.B) {
		s, err := streams.New(ctx, dev)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close(ctx)
		for b.Loop() {
			if err := work(ctx, dev, s); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, c := range []struct {
		name string
		job  group.Job
	}{
		{"do_nop", func(context.Context, *device.Device, *streams.Stream) error { return nil }},
		{"do", work},
	} {
		b.Run(c.name, func(b *testing.B) {
			g, err := group.New(ctx, []*device.Device{dev}, group.WithStreams(1))
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close(context.Background())
			b.ReportAllocs()
			for b.Loop() {
				if err := g.Do(ctx, c.job); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
