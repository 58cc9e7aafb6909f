package device_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// Stats sees the work in flight on a held stream, counts it done once the stream moves, times
// it, and counts failures, memory and staging.
func TestStatsFollowTheWork(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := testdev.Open(t, ctx, opts)
		k, err := saxpyModule(t, dev).Kernel(ctx, "empty")
		require.NoError(t, err)
		s, err := streams.New(ctx, dev)
		require.NoError(t, err)
		defer s.Close(ctx)

		before := dev.Stats()
		assert.Equal(t, 0, before.Ordinal)
		assert.Empty(t, before.Failure)
		assert.False(t, before.Closed)
		assert.Zero(t, before.InFlight)

		gate := make(chan struct{})
		held := s.HostFunc(ctx, func() { <-gate })
		var last *streams.Future
		const n = 10
		for range n {
			last = s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(32)})
		}
		require.Eventually(t, func() bool { return dev.Stats().Mailbox == 0 }, time.Minute, time.Millisecond)
		mid := dev.Stats()
		assert.Equal(t, int64(n+1), mid.InFlight, "the held host function and the launches behind it")
		assert.Equal(t, int64(n+1), s.InFlight())
		assert.Equal(t, before.Sent+n+1, mid.Sent)
		time.Sleep(5 * time.Millisecond) // the held operations are at least this old when they finish
		close(gate)
		require.NoError(t, held.Wait(ctx))
		require.NoError(t, last.Wait(ctx))

		after := dev.Stats()
		assert.Zero(t, after.InFlight)
		assert.Zero(t, s.InFlight())
		assert.Equal(t, before.Latency.Count+n+1, after.Latency.Count, "every operation timed")
		assert.GreaterOrEqual(t, after.Latency.Sum-before.Latency.Sum, time.Duration(n+1)*5*time.Millisecond)
		assert.GreaterOrEqual(t, after.Latency.Quantile(1), 5*time.Millisecond, "the slowest took the gate's time")
		assert.Positive(t, after.Actor.Messages)
		assert.Positive(t, after.Actor.Busy+after.Actor.Spin+after.Actor.Park)
		// The tracking completed every future, counted before the waiter woke, with a watermark
		// for one operation or more.
		done := after.Tracker.Completed - before.Tracker.Completed
		marks := after.Tracker.Watermarks - before.Tracker.Watermarks
		assert.GreaterOrEqual(t, done, uint64(n+1), "every operation's future completed by the tracking")
		assert.Positive(t, marks)
		assert.LessOrEqual(t, marks, done, "no watermark without an operation")
		assert.GreaterOrEqual(t, after.Tracker.Queries-before.Tracker.Queries, marks, "each watermark asked about at least once")
		assert.Positive(t, after.Tracker.Polls-before.Tracker.Polls)

		// A failed operation counts as failed.
		buf, err := dev.MallocBytes(ctx, 64)
		require.NoError(t, err)
		assert.Equal(t, uint64(64), dev.Stats().Memory.Device.Bytes)
		require.NoError(t, buf.Close(ctx))
		require.Error(t, s.Memset(ctx, buf, 0).Wait(ctx))
		assert.Equal(t, after.Failed+1, dev.Stats().Failed)

		// Staging shows once a slice is copied.
		src := make([]float32, 1000)
		dst, err := dev.MallocBytes(ctx, 4000)
		require.NoError(t, err)
		require.NoError(t, streams.CopyToDevice(ctx, s, dst, src).Wait(ctx))
		st := dev.Stats().Staging
		assert.Equal(t, uint64(device.StagingSlotSize), st.PinnedBytes)
		assert.Equal(t, uint64(device.DefaultStagingLimit), st.LimitBytes)
		assert.Zero(t, st.InUseBytes)

		js, err := json.Marshal(dev.Stats())
		require.NoError(t, err)
		assert.Contains(t, string(js), `"InFlight":0`)
	})
}

// Stats never waits for the actor: it reads while the actor is held and many goroutines send,
// and after Close.
func TestStatsDoNotWait(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev, err := device.Open(ctx, 0, device.WithSimulator(sim.New()), device.WithKernelCache(""))
	require.NoError(t, err)
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	gate := make(chan struct{})
	s.HostFunc(ctx, func() { <-gate })
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				_ = dev.Stats()
				s.Memset(ctx, nil, 0) // fails on the actor: counted as sent and failed
			}
		})
	}
	wg.Wait()
	close(gate)
	require.NoError(t, s.Synchronize(ctx))
	require.NoError(t, dev.Close())
	st := dev.Stats()
	assert.True(t, st.Closed)
	assert.Zero(t, st.InFlight)
	assert.Equal(t, uint64(800), st.Failed)
	assert.GreaterOrEqual(t, st.Sent, uint64(801))
	assert.Equal(t, st.Sent, st.Latency.Count, "every operation sent completed and was timed")
}

func TestLatencyQuantile(t *testing.T) {
	var none device.Latency
	assert.Zero(t, none.Quantile(0.5))
	assert.Zero(t, none.Mean())
	l := device.Latency{Count: 4, Sum: 40 * time.Microsecond, Buckets: []device.LatencyBucket{
		{UpTo: 8 * time.Microsecond, Count: 2},
		{UpTo: 32 * time.Microsecond, Count: 2},
	}}
	assert.Equal(t, 10*time.Microsecond, l.Mean())
	assert.Equal(t, 8*time.Microsecond, l.Quantile(0.5), "the top of the first bucket")
	assert.Equal(t, 32*time.Microsecond, l.Quantile(1))
	assert.Equal(t, 24*time.Microsecond, l.Quantile(0.75), "halfway through the second bucket")
	assert.Equal(t, 4*time.Microsecond, l.Quantile(0), "the bottom of the first")
}

// Operations refused because their caller's context ended count as Cancelled, not as Failed:
// a caller that gives up says nothing of the device's health.
func TestStatsCountCancelledApart(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev, err := device.Open(ctx, 0, device.WithSimulator(sim.New()), device.WithKernelCache(""))
	require.NoError(t, err)
	defer func() { require.NoError(t, dev.Close()) }()
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	buf, err := dev.MallocBytes(ctx, 64)
	require.NoError(t, err)
	before := dev.Stats()

	// Held behind a host function, operations whose caller leaves are refused when the actor
	// reaches them.
	gate := make(chan struct{})
	s.HostFunc(ctx, func() { <-gate })
	cctx, cancel := context.WithCancel(ctx)
	var futs []*streams.Future
	for range 10 {
		futs = append(futs, s.Memset(cctx, buf, 0))
	}
	cancel()
	for range 5 {
		futs = append(futs, s.Memset(cctx, buf, 0)) // refused at once: its context has ended
	}
	close(gate)
	require.NoError(t, s.Synchronize(ctx))
	var cancelled uint64
	for _, f := range futs {
		if err := f.Wait(ctx); err != nil {
			require.ErrorIs(t, err, context.Canceled)
			cancelled++
		}
	}
	require.GreaterOrEqual(t, cancelled, uint64(5))

	closed, err := dev.MallocBytes(ctx, 64)
	require.NoError(t, err)
	require.NoError(t, closed.Close(ctx))
	require.Error(t, s.Memset(ctx, closed, 0).Wait(ctx)) // a real failure

	after := dev.Stats()
	assert.Equal(t, before.Cancelled+cancelled, after.Cancelled)
	assert.Equal(t, before.Failed+1, after.Failed, "only the real failure counts as failed")
	assert.Zero(t, after.InFlight)
}
