package device_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/nullgpu"
	"github.com/gpuactor/gpuactor/internal/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// BenchmarkAllocOverheadPair is gpuactor's own cost of a MallocAsync + FreeAsync pair, queued
// without waiting 200 at a time as in the bench row mallocasync_free_pair, then the last free
// awaited, with allocation, watermarks and the GPU themselves free (nullgpu). caller-ns/pair
// is the time the caller spends queuing a pair; the rest of ns/op is the wait for the actor.
func BenchmarkAllocOverheadPair(b *testing.B) {
	ctx := context.Background()
	dev, err := device.OpenOn(ctx, nullgpu.Backend{Backend: sim.New()}, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer dev.Close()
	s, err := streams.New(ctx, dev)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Destroy(ctx)
	const batch = 200
	var last *streams.Future
	var queuing time.Duration
	start := time.Now()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		buf, _, err := alloc.MallocAsync[byte](ctx, s, 1<<20)
		if err != nil {
			b.Fatal(err)
		}
		last = buf.FreeAsync(ctx, nil)
		if i%batch == batch-1 {
			queuing += time.Since(start)
			if _, err := last.Await(ctx); err != nil {
				b.Fatal(err)
			}
			start = time.Now()
		}
	}
	queuing += time.Since(start)
	if _, err := last.Await(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(queuing.Nanoseconds())/float64(b.N), "caller-ns/pair")
}
