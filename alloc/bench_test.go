package alloc_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// benchPairs is how many pairs are queued between synchronizations, as in the bench row
// mallocasync_free_pair (bench/alloc_rows.go).
const benchPairs = 200

func benchStream(b *testing.B) (context.Context, *streams.Stream) {
	b.Helper()
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithSimulator(device.NewSimulator()))
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, dev.Close()) })
	s, err := streams.New(ctx, dev)
	require.NoError(b, err)
	b.Cleanup(func() { _ = s.Destroy(context.Background()) })
	return ctx, s
}

// BenchmarkMallocAsyncFreePair is the Go-side cost of a stream-ordered allocation and its free
// on the simulator: MallocAsync + FreeAsync queued without waiting, benchPairs at a time, then
// the last free awaited. One op is one pair.
func BenchmarkMallocAsyncFreePair(b *testing.B) {
	ctx, s := benchStream(b)
	var last *streams.Future
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		buf, _, err := alloc.MallocAsync[byte](ctx, s, 4<<10)
		if err != nil {
			b.Fatal(err)
		}
		last = buf.FreeAsync(ctx, nil)
		if i%benchPairs == benchPairs-1 {
			if _, err := last.Await(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := last.Await(ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkMallocFreePair is alloc.Malloc + Buffer.Free (cudaMalloc + cudaFree) on the
// simulator. One op is one pair.
func BenchmarkMallocFreePair(b *testing.B) {
	ctx, s := benchStream(b)
	b.ReportAllocs()
	for b.Loop() {
		buf, err := alloc.Malloc[byte](ctx, s, 4<<10)
		if err != nil {
			b.Fatal(err)
		}
		if err := buf.Free(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
