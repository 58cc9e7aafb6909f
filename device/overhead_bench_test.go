package device_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// freeAllocs is the simulator with stream-ordered allocation made free: MallocAsync hands out
// made-up addresses and FreeAsync does nothing, so that what a benchmark measures is
// gpuactor's own cost per operation (messages, futures, the tracker's watermarks, which the
// simulator still records and queries), not the simulator's allocator.
type freeAllocs struct{ backend.Backend }

func (b freeAllocs) Open(ordinal int) (backend.Device, error) {
	d, err := b.Backend.Open(ordinal)
	return &freeAllocDevice{Device: d}, err
}

type freeAllocDevice struct {
	backend.Device
	next uint64
}

func (d *freeAllocDevice) MallocAsync(size uint64, _ backend.Stream) (backend.DevicePtr, error) {
	d.next += 1 << 20
	return backend.DevicePtr(d.next), nil
}

func (d *freeAllocDevice) FreeAsync(backend.DevicePtr, backend.Stream) error { return nil }

// BenchmarkAllocOverheadPair is gpuactor's own cost of a MallocAsync + FreeAsync pair, queued
// without waiting 200 at a time as in the bench row mallocasync_free_pair, then the last free
// awaited, with allocation itself free (freeAllocs). caller-ns/pair is the time the caller
// spends queuing a pair; the rest of ns/op is the wait for the actor and for the simulated
// GPU to pass the last free (on a host with few cores, mostly the simulator's goroutines
// waiting for a CPU).
func BenchmarkAllocOverheadPair(b *testing.B) {
	ctx := context.Background()
	dev, err := device.OpenOn(ctx, freeAllocs{sim.New()}, 0)
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
