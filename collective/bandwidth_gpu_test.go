package collective

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// All-reduce bus bandwidth as NVIDIA's all_reduce_perf reports it, for side-by-side rows
// with the C++ baseline over the same libnccl: float32 sum, out of place, 1 MiB to 1 GiB
// doubling, bwWarmup untimed then 20 timed iterations per size ($GPUACTOR_COLL_ITERS), queued back to back on
// each rank's stream and timed to the last one's completion; algbw = bytes / time,
// busbw = algbw × 2(n−1)/n (GB/s, 10⁹ bytes). Opt-in, since it takes a while:
//
//	GPUACTOR_COLL_BENCH=1 go test ./collective -run 'GPUAllReduceBandwidth' -v
//
// TestGPUAllReduceBandwidth drives every local GPU from this process (one actor thread per
// GPU); TestGPUAllReduceBandwidthTwoProcesses runs rank 0 here on GPU 0 and rank 1 in a
// child process on GPU 1. Each measures blocking communicators (the default) and then
// non-blocking ones (WithNonBlocking), a table each.

const (
	bwEnv      = "GPUACTOR_COLL_BENCH"
	bwWarmup   = 5
	bwItersEnv = "GPUACTOR_COLL_ITERS" // timed iterations per size; 20 (all_reduce_perf's default) without it
)

// bwTuning lets the rows' waiters spin through a batch, as the C++ baseline's
// cudaStreamSynchronize does: with the default 100 µs a waiter parks in a batch of 20
// operations (300 µs and more) and is woken late, a fixed cost of tens of microseconds that
// would be charged to every operation of the batch.
var bwTuning = device.WithActorTuning(device.ActorTuning{AwaitSpin: 20 * time.Millisecond})

func TestGPUAllReduceBandwidth(t *testing.T) {
	if os.Getenv(bwEnv) != "1" {
		t.Skip("set " + bwEnv + "=1 to measure")
	}
	ctx := context.Background()
	devs, ss := cudaRanks(t, ctx, 1, bwTuning)
	for _, m := range commModes {
		t.Run(m.name, func(t *testing.T) {
			comms, err := NewLocal(ctx, devs, m.opts...)
			require.NoError(t, err)
			defer closeComms(t, ctx, comms)
			allReduceRows(t, ctx, comms, ss, true)
		})
	}
}

func TestGPUAllReduceBandwidthTwoProcesses(t *testing.T) {
	if os.Getenv(bwEnv) != "1" {
		t.Skip("set " + bwEnv + "=1 to measure")
	}
	ctx := context.Background()
	devs, ss := cudaRanks(t, ctx, 2, bwTuning)
	for _, m := range commModes {
		t.Run(m.name, func(t *testing.T) { bandwidthTwoProcesses(t, ctx, devs, ss, m.name) })
	}
}

// bandwidthTwoProcesses measures rank 0 here and rank 1 in a child, with communicators of
// mode.
func bandwidthTwoProcesses(t *testing.T, ctx context.Context, devs []*device.Device, ss []*streams.Stream, mode string) {
	id, wait := startRankOne(t, ctx, devs[0], "TestGPUAllReduceBandwidthChild", mode)
	c, err := Join(ctx, devs[0], id, 2, 0, modeOpts(mode)...)
	require.NoError(t, err)
	allReduceRows(t, ctx, []*Comm{c}, ss[:1], true)
	require.NoError(t, c.Close(ctx))
	require.NoError(t, wait(), "the child (rank 1)")
}

// TestGPUAllReduceBandwidthChild is rank 1 of TestGPUAllReduceBandwidthTwoProcesses.
func TestGPUAllReduceBandwidthChild(t *testing.T) {
	id, rank, opts, ok := childRank(t)
	if !ok {
		t.Skip("the child process of TestGPUAllReduceBandwidthTwoProcesses")
	}
	ctx := context.Background()
	devs, ss := cudaRanks(t, ctx, 2, bwTuning)
	c, err := Join(ctx, devs[rank], id, 2, rank, opts...)
	require.NoError(t, err)
	allReduceRows(t, ctx, []*Comm{c}, ss[rank:rank+1], false)
	require.NoError(t, c.Close(ctx))
}

// allReduceRows measures this process's ranks (comms, each with its stream); every rank of
// the communicator, in any process, must run it. It logs a row per size when report is set.
func allReduceRows(t *testing.T, ctx context.Context, comms []*Comm, ss []*streams.Stream, report bool) {
	n := comms[0].Count()
	iters := 20
	if v, err := strconv.Atoi(os.Getenv(bwItersEnv)); err == nil && v > 0 {
		iters = v
	}
	if report {
		t.Logf("%12s %10s %12s %12s   (%d ranks)", "size(B)", "time(us)", "algbw(GB/s)", "busbw(GB/s)", n)
	}
	for size := 1 << 20; size <= 1<<30; size <<= 1 {
		elems := size / 4
		send := make([]*alloc.Buffer[float32], len(comms))
		recv := make([]*alloc.Buffer[float32], len(comms))
		for r := range comms {
			var err error
			send[r], err = alloc.Malloc[float32](ctx, ss[r], elems)
			require.NoError(t, err)
			recv[r], err = alloc.Malloc[float32](ctx, ss[r], elems)
			require.NoError(t, err)
			require.NoError(t, ss[r].Memset(ctx, send[r], 0).Wait(ctx))
		}
		round := func() []*streams.Future {
			fs := make([]*streams.Future, len(comms))
			for r, c := range comms {
				fs[r] = AllReduce(ctx, ss[r], c, send[r], recv[r], Sum)
			}
			return fs
		}
		for range bwWarmup {
			waitAll(t, ctx, round()...)
		}
		start := time.Now()
		var last []*streams.Future
		for range iters {
			last = round()
		}
		waitAll(t, ctx, last...)
		per := time.Since(start).Seconds() / float64(iters)
		algbw := float64(size) / per / 1e9
		if report {
			t.Logf("%12d %10.1f %12.2f %12.2f", size, per*1e6, algbw, algbw*2*float64(n-1)/float64(n))
		}
		for r := range comms {
			require.NoError(t, send[r].Close(ctx))
			require.NoError(t, recv[r].Close(ctx))
		}
	}
}
