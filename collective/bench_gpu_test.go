package collective

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/streams"
)

// BenchmarkGPUAllReduce is all-reduce (float32, sum, out of place) over every local GPU at
// 1 MiB to 1 GiB doubling, reported as nccl-tests reports it: algbw = bytes / time per iteration and
// busbw = algbw × 2(n−1)/n, in GB/s (10⁹ bytes). Like all_reduce_perf, the iterations are
// queued back to back on each rank's stream and timed to the last one's completion.
//
//	go test ./collective -run '^$' -bench GPUAllReduce -benchtime 20x
func BenchmarkGPUAllReduce(b *testing.B) {
	ctx := context.Background()
	devs, ss := cudaRanks(b, ctx, 1)
	comms, err := NewLocal(ctx, devs)
	require.NoError(b, err)
	defer closeComms(b, ctx, comms)
	n := len(comms)
	for size := 1 << 20; size <= 1<<30; size <<= 1 {
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			elems := size / 4
			send := make([]*alloc.Buffer[float32], n)
			recv := make([]*alloc.Buffer[float32], n)
			for r := range n {
				send[r], err = alloc.Malloc[float32](ctx, ss[r], elems)
				require.NoError(b, err)
				recv[r], err = alloc.Malloc[float32](ctx, ss[r], elems)
				require.NoError(b, err)
				require.NoError(b, ss[r].Memset(ctx, send[r], 0).Wait(ctx))
			}
			defer func() {
				for r := range n {
					_ = send[r].Close(ctx)
					_ = recv[r].Close(ctx)
				}
			}()
			round := func() []*streams.Future {
				fs := make([]*streams.Future, n)
				for r, c := range comms {
					fs[r] = AllReduce(ctx, ss[r], c, send[r], recv[r], Sum)
				}
				return fs
			}
			for range 5 { // warm up: connections, NCCL's buffers
				waitAll(b, ctx, round()...)
			}
			b.SetBytes(int64(size))
			b.ResetTimer()
			start := time.Now()
			var last []*streams.Future
			for range b.N {
				last = round()
			}
			waitAll(b, ctx, last...)
			per := time.Since(start).Seconds() / float64(b.N)
			b.StopTimer()
			algbw := float64(size) / per / 1e9
			b.ReportMetric(algbw, "algbw_GB/s")
			b.ReportMetric(algbw*2*float64(n-1)/float64(n), "busbw_GB/s")
		})
	}
}
