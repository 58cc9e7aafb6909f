package core

import (
	"context"
	"fmt"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/gpuactor/gpuactor/internal/nullgpu"
)

// openNullHandles opens k devices of ordinal 0 of one null backend (internal/nullgpu): k
// actors on one GPU, as k device.Open calls of one ordinal make them, each with the empty
// kernel loaded.
func openNullHandles(b *testing.B, k int) ([]*Device, []*Kernel) {
	b.Helper()
	be := nullgpu.New()
	devs, kernels := make([]*Device, k), make([]*Kernel, k)
	for i := range devs {
		devs[i], kernels[i] = openOn(b, be, Config{})
	}
	return devs, kernels
}

// BenchmarkSubmitters: 8 goroutines, each launching on a stream of its own with 64 futures in
// flight (bench's stream_launch_8), the streams spread round-robin over 1, 2 or 4 actors of
// one null GPU. One op is a batch of 256 launches per goroutine; ns/launch is the batch's time
// over its 2048 launches. On a GPU each actor's thread spends most of its time in the runtime's
// launch call, which the null GPU returns from at once: what this shows is gpuactor's own CPU
// work per launch and whether it spreads over more actors, bounded by the cores the machine
// has (docs/design/submitters.md).
func BenchmarkSubmitters(b *testing.B) {
	const goroutines, perBatch, window = 8, 256, 64
	for _, k := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("goroutines=%d/actors=%d", goroutines, k), func(b *testing.B) {
			ctx := context.Background()
			devs, kernels := openNullHandles(b, k)
			ss := make([]*Stream, goroutines)
			for i := range ss {
				s, err := NewStream(ctx, devs[i%k], StreamConfig{})
				if err != nil {
					b.Fatal(err)
				}
				ss[i] = s
			}
			launch := func(i int) error {
				var ring [window]*Future
				for n := range perBatch {
					if f := ring[n%window]; f != nil {
						if err := f.Wait(ctx); err != nil {
							return err
						}
					}
					ring[n%window] = Launch(ctx, ss[i], kernels[i%k], oneBlock, nil)
				}
				for _, f := range ring {
					if f != nil {
						if err := f.Wait(ctx); err != nil {
							return err
						}
					}
				}
				return nil
			}
			var parks, batches, marks uint64
			before := make([]TrackerStats, k)
			for j, d := range devs {
				before[j] = d.TrackerStats()
				parks -= d.ActorStats().Parks
				batches -= d.ActorStats().Batches
			}
			b.ReportAllocs()
			for b.Loop() {
				var eg errgroup.Group
				for i := range goroutines {
					eg.Go(func() error { return launch(i) })
				}
				if err := eg.Wait(); err != nil {
					b.Fatal(err)
				}
			}
			launches := float64(b.N * goroutines * perBatch)
			for j, d := range devs {
				after := d.TrackerStats()
				if got, want := after.Completed-before[j].Completed, uint64(b.N*perBatch*goroutines/k); got < want {
					b.Fatalf("actor %d completed %d launches, want %d", j, got, want)
				}
				marks += after.Watermarks - before[j].Watermarks
				parks += d.ActorStats().Parks
				batches += d.ActorStats().Batches
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/launches, "ns/launch")
			b.ReportMetric(float64(marks)/launches, "marks/launch")
			b.ReportMetric(float64(batches)/launches, "actor-batches/launch")
			b.ReportMetric(float64(parks)/launches, "actor-parks/launch")
		})
	}
}
