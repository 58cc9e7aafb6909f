package alloc_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/nullgpu"
	isim "github.com/gpuactor/gpuactor/internal/sim"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testgpu"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// benchPairs is how many pairs are queued between synchronizations, as in the bench row
// mallocasync_free_pair (bench/alloc_rows.go).
const benchPairs = 200

// benchBackends runs fn on the simulator and, when there is one, on the GPU.
func benchBackends(b *testing.B, fn func(b *testing.B, opts []device.Option)) {
	b.Run("sim", func(b *testing.B) { fn(b, []device.Option{device.WithSimulator(sim.New())}) })
	b.Run("cuda", func(b *testing.B) {
		testgpu.Need(b, testdev.GPU(), "the cuda backend sees no device")
		fn(b, []device.Option{device.WithBackend(device.BackendCUDA)})
	})
}

func benchStream(b *testing.B, opts []device.Option) (context.Context, *streams.Stream) {
	b.Helper()
	ctx := context.Background()
	dev := testdev.Open(b, ctx, opts)
	s, err := streams.New(ctx, dev)
	require.NoError(b, err)
	b.Cleanup(func() { _ = s.Close(context.Background()) })
	return ctx, s
}

// BenchmarkMallocAsyncFreePair is a stream-ordered allocation and its free: MallocAsync +
// CloseOn queued without waiting, benchPairs at a time, then the last free waited for. One op
// is one pair. On the simulator it is gpuactor's own cost.
func BenchmarkMallocAsyncFreePair(b *testing.B) { benchBackends(b, mallocAsyncFreePairs) }

func mallocAsyncFreePairs(b *testing.B, opts []device.Option) {
	ctx, s := benchStream(b, opts)
	var last *streams.Future
	before := s.Device().Stats().Tracker
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		buf, _, err := alloc.MallocAsync[byte](ctx, s, 4<<10)
		if err != nil {
			b.Fatal(err)
		}
		last = buf.CloseOn(ctx, nil)
		if i%benchPairs == benchPairs-1 {
			if err := last.Wait(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := last.Wait(ctx); err != nil {
		b.Fatal(err)
	}
	reportTracking(b, before, s.Device().Stats().Tracker)
}

// reportTracking reports the completion tracker's work per op between two snapshots: how
// often the actor polled, recorded a watermark and asked one.
func reportTracking(b *testing.B, before, after device.TrackerStats) {
	n := float64(b.N)
	b.ReportMetric(float64(after.Polls-before.Polls)/n, "polls/op")
	b.ReportMetric(float64(after.Watermarks-before.Watermarks)/n, "marks/op")
	b.ReportMetric(float64(after.Queries-before.Queries)/n, "queries/op")
}

// BenchmarkMallocFreePair is alloc.Malloc + Buffer.Close (cudaMalloc + cudaFree). One op is
// one pair.
func BenchmarkMallocFreePair(b *testing.B) { benchBackends(b, mallocFreePairs) }

func mallocFreePairs(b *testing.B, opts []device.Option) {
	ctx, s := benchStream(b, opts)
	b.ReportAllocs()
	for b.Loop() {
		buf, err := alloc.Malloc[byte](ctx, s, 4<<10)
		if err != nil {
			b.Fatal(err)
		}
		if err := buf.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAllocOverheadPair is gpuactor's own cost of a MallocAsync + CloseOn pair, queued
// without waiting 200 at a time as in the bench row mallocasync_free_pair, then the last free
// waited for, with allocation, watermarks and the GPU themselves free (nullgpu).
// caller-ns/pair is the time the caller spends queuing a pair; the rest of ns/op is the wait
// for the actor.
func BenchmarkAllocOverheadPair(b *testing.B) {
	ctx := context.Background()
	dev := testdev.OpenOn(b, ctx, nullgpu.Backend{Backend: isim.New()})
	s, err := streams.New(ctx, dev)
	require.NoError(b, err)
	defer s.Close(ctx)
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
		last = buf.CloseOn(ctx, nil)
		if i%batch == batch-1 {
			queuing += time.Since(start)
			if err := last.Wait(ctx); err != nil {
				b.Fatal(err)
			}
			start = time.Now()
		}
	}
	queuing += time.Since(start)
	if err := last.Wait(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(queuing.Nanoseconds())/float64(b.N), "caller-ns/pair")
}

// BenchmarkFreeAfterDone is gpuactor's own cost of the bench row free_after_done: a Malloc
// buffer (4 KiB here, not the row's 1 MiB, whose allocation the simulator pays for in host
// memory) memset and awaited, then CloseOn awaited, with the GPU free (nullgpu). close-ns is
// the Close alone, from the call to the future's completion; marks/free is how many
// watermarks the tracker recorded per free (none once the stream is found drained).
func BenchmarkFreeAfterDone(b *testing.B) {
	ctx := context.Background()
	dev := testdev.OpenOn(b, ctx, nullgpu.Backend{Backend: isim.New()})
	s, err := streams.New(ctx, dev)
	require.NoError(b, err)
	defer s.Close(ctx)
	var closing time.Duration
	var marks uint64
	b.ReportAllocs()
	for b.Loop() {
		buf, err := alloc.Malloc[byte](ctx, s, 4<<10) // small: the simulator clears what it frees
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Memset(ctx, buf, 0).Wait(ctx); err != nil {
			b.Fatal(err)
		}
		before := dev.Stats().Tracker.Watermarks
		start := time.Now()
		if _, err := buf.CloseOn(ctx, nil).Await(ctx); err != nil {
			b.Fatal(err)
		}
		closing += time.Since(start)
		marks += dev.Stats().Tracker.Watermarks - before
	}
	b.ReportMetric(float64(closing.Nanoseconds())/float64(b.N), "close-ns")
	b.ReportMetric(float64(marks)/float64(b.N), "marks/free")
}
