package group_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/internal/testleak"
	"github.com/gpuactor/gpuactor/streams"
)

var errBoom = errors.New("boom")

// TestFirstErrorCancelsTheBatch: on one device of two streams, one job fails while a sibling
// runs and more wait in the queue. The failure cancels the batch's context with itself as the
// cause: the running sibling sees its context end, the queued ones never run, and Wait
// returns the failure, not the cancellations it caused.
func TestFirstErrorCancelsTheBatch(t *testing.T) {
	g := newGroup(t, openSims(t, 1), group.WithStreams(2))
	ctx := g.BatchContext(context.Background())
	running := make(chan struct{})
	var sawCancel atomic.Bool
	g.Go(ctx, func(ctx context.Context, _ *device.Device, _ *streams.Stream) error {
		<-running
		return errBoom
	})
	g.Go(ctx, func(ctx context.Context, _ *device.Device, _ *streams.Stream) error {
		close(running)
		<-ctx.Done()
		sawCancel.Store(true)
		return ctx.Err()
	})
	var queuedRan atomic.Int32
	for range 100 {
		g.Go(ctx, func(context.Context, *device.Device, *streams.Stream) error {
			queuedRan.Add(1)
			return nil
		})
	}
	require.ErrorIs(t, g.Wait(), errBoom)
	assert.True(t, sawCancel.Load(), "the running sibling saw its context end")
	assert.Zero(t, queuedRan.Load(), "the queued jobs never ran")
	assert.ErrorIs(t, context.Cause(ctx), errBoom, "the cause is the first error")

	// The next batch starts clean: a new context, no error carried over.
	ctx2 := g.BatchContext(context.Background())
	g.Go(ctx2, func(context.Context, *device.Device, *streams.Stream) error { return nil })
	require.NoError(t, g.Wait())
	assert.ErrorIs(t, ctx2.Err(), context.Canceled, "Wait ends the batch's context, as errgroup's does")
	assert.Equal(t, context.Canceled, context.Cause(ctx2), "…with no error of a job as its cause")
}

// TestBatchContextAfterAFailure: a context asked for once the batch has failed is cancelled
// at once, so a job started under it does not run.
func TestBatchContextAfterAFailure(t *testing.T) {
	g := newGroup(t, openSims(t, 1))
	g.Go(context.Background(), nil) // refused at once: a nil job
	ctx := g.BatchContext(context.Background())
	assert.ErrorIs(t, context.Cause(ctx), device.ErrInvalidArgument)
	var ran atomic.Bool
	g.Go(ctx, func(context.Context, *device.Device, *streams.Stream) error { ran.Store(true); return nil })
	require.ErrorIs(t, g.Wait(), device.ErrInvalidArgument, "the first error, not the later cancellation")
	assert.False(t, ran.Load())
}

// TestWaitReturnsTheFirstError: without BatchContext the siblings of a failed job run to the
// end, and Wait reports the one error among them; a nil job is an error of the batch too.
func TestWaitReturnsTheFirstError(t *testing.T) {
	g := newGroup(t, openSims(t, 2))
	ctx := context.Background()
	var ran atomic.Int32
	for i := range 200 {
		g.Go(ctx, func(context.Context, *device.Device, *streams.Stream) error {
			ran.Add(1)
			if i == 77 {
				return errBoom
			}
			return nil
		})
	}
	require.ErrorIs(t, g.Wait(), errBoom)
	assert.Equal(t, int32(200), ran.Load(), "no context to cancel: every job ran")
	require.NoError(t, g.Wait(), "an empty batch")
}

// TestGoStartsNoGoroutinePerJob: a thousand jobs waiting behind one that holds the only
// stream add no goroutine each (the old Go waited on every job's future with one), and none
// is left once Wait returns.
func TestGoStartsNoGoroutinePerJob(t *testing.T) {
	const jobs = 1000
	g := newGroup(t, openSims(t, 1), group.WithStreams(1), group.WithQueue(jobs+1))
	ctx := context.Background()
	before := runtime.NumGoroutine()
	hold := make(chan struct{})
	g.Go(ctx, func(context.Context, *device.Device, *streams.Stream) error { <-hold; return nil })
	var ran atomic.Int32
	for range jobs {
		g.Go(ctx, func(context.Context, *device.Device, *streams.Stream) error { ran.Add(1); return nil })
	}
	assert.Less(t, runtime.NumGoroutine()-before, 10, "goroutines added by %d pending jobs", jobs+1)
	close(hold)
	require.NoError(t, g.Wait())
	assert.Equal(t, int32(jobs), ran.Load())
	testleak.Settle(t, before)
}

// TestGoFromManyGoroutines: Go called from many goroutines at once, one job failing; Wait sees
// every job, and the one error.
func TestGoFromManyGoroutines(t *testing.T) {
	const callers, each = 8, 100
	g := newGroup(t, openSims(t, 2))
	ctx := context.Background()
	var ran atomic.Int32
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			for i := range each {
				g.Go(ctx, func(context.Context, *device.Device, *streams.Stream) error {
					ran.Add(1)
					if c == 3 && i == 50 {
						return errBoom
					}
					return nil
				})
			}
		})
	}
	wg.Wait()
	require.ErrorIs(t, g.Wait(), errBoom)
	assert.Equal(t, int32(callers*each), ran.Load())
}
