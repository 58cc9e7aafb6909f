package group_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/internal/testleak"
	"github.com/gpuactor/gpuactor/streams"
)

// feedInts sends 0..n-1 on the channel it returns, then closes it, unless ctx ends first;
// sent counts the items Pipe took.
func feedInts(ctx context.Context, n int, sent *atomic.Int64) <-chan int {
	in := make(chan int)
	go func() {
		defer close(in)
		for i := range n {
			select {
			case in <- i:
				if sent != nil {
					sent.Add(1)
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return in
}

// square is an item function that squares its item on the stream's order, after a random
// pause of up to maxPause.
func square(maxPause time.Duration) group.Item[int, int] {
	return func(ctx context.Context, _ *device.Device, s *streams.Stream, x int) (int, error) {
		if maxPause > 0 {
			time.Sleep(rand.N(maxPause))
		}
		var r int
		if err := s.HostFunc(ctx, func() { r = x * x }).Wait(ctx); err != nil {
			return 0, err // r may yet be written: the wait ended with ctx, not the host function
		}
		return r, nil
	}
}

// In completion order, a result that completes first comes first: item 0 waits until item 1's
// result has been taken.
func TestPipeInCompletionOrder(t *testing.T) {
	testleak.AtCleanup(t)
	ctx := context.Background()
	g := newGroup(t, openSims(t, 2))
	second := make(chan struct{})
	out := group.Pipe(ctx, g, feedInts(ctx, 2, nil), func(ctx context.Context, _ *device.Device, _ *streams.Stream, x int) (string, error) {
		if x == 0 {
			<-second
		}
		return fmt.Sprint("item ", x), nil
	})
	r := <-out
	assert.Equal(t, group.Result[int, string]{Index: 1, Item: 1, Value: "item 1"}, r)
	close(second)
	r = <-out
	assert.Equal(t, group.Result[int, string]{Index: 0, Item: 0, Value: "item 0"}, r)
	_, open := <-out
	assert.False(t, open, "the output closes once the input has closed and every result is sent")
}

// Every item has its result, once, in either order; Ordered keeps the input's order however
// long each job takes; Pipe never holds more items than its window.
func TestPipeEveryItemOnce(t *testing.T) {
	for _, ordered := range []bool{false, true} {
		t.Run(fmt.Sprint("ordered=", ordered), func(t *testing.T) {
			testleak.AtCleanup(t)
			ctx := context.Background()
			g := newGroup(t, openSims(t, 3), group.WithStreams(2))
			const n, window = 400, 5
			var sent atomic.Int64
			opts := []group.PipeOption{group.Window(window)}
			if ordered {
				opts = append(opts, group.Ordered())
			}
			seen := make([]bool, n)
			received := int64(0)
			for r := range group.Pipe(ctx, g, feedInts(ctx, n, &sent), square(200*time.Microsecond), opts...) {
				received++
				require.NoError(t, r.Err)
				require.Equal(t, r.Index, r.Item)
				require.Equal(t, r.Item*r.Item, r.Value)
				require.False(t, seen[r.Index], "item %d twice", r.Index)
				seen[r.Index] = true
				if ordered {
					require.Equal(t, int64(r.Index), received-1, "in input order")
				}
				require.LessOrEqual(t, sent.Load()-received, int64(window), "items read and not yet taken")
			}
			assert.Equal(t, int64(n), received)
			var done uint64
			for _, st := range g.Stats().Devices {
				done += st.Done
			}
			assert.Equal(t, uint64(n), done)
		})
	}
}

// A job's error, and a panic, come in the item's Result; the other items go on.
func TestPipeJobErrors(t *testing.T) {
	testleak.AtCleanup(t)
	ctx := context.Background()
	g := newGroup(t, openSims(t, 2))
	errOdd := errors.New("odd")
	out := group.Pipe(ctx, g, feedInts(ctx, 50, nil), func(_ context.Context, _ *device.Device, _ *streams.Stream, x int) (int, error) {
		switch {
		case x == 7:
			panic("seven")
		case x%2 == 1:
			return -1, errOdd
		}
		return x, nil
	}, group.Ordered())
	for r := range out {
		switch {
		case r.Item == 7:
			var pe *actor.PanicError
			require.ErrorAs(t, r.Err, &pe)
			assert.Equal(t, "seven", pe.Value)
		case r.Item%2 == 1:
			require.ErrorIs(t, r.Err, errOdd)
			assert.Equal(t, -1, r.Value, "the value the function returned with its error")
		default:
			require.NoError(t, r.Err)
			assert.Equal(t, r.Item, r.Value)
		}
	}
}

// An input that closes at once: the output closes with no result.
func TestPipeEmptyInput(t *testing.T) {
	testleak.AtCleanup(t)
	ctx := context.Background()
	g := newGroup(t, openSims(t, 1))
	in := make(chan int)
	close(in)
	for _, opts := range [][]group.PipeOption{nil, {group.Ordered()}} {
		n := 0
		for range group.Pipe(ctx, g, in, square(0), opts...) {
			n++
		}
		assert.Zero(t, n)
	}
}

// ctx ends mid-stream, on an input that never closes: the output closes once the running jobs
// have ended, no job starts after that, and no goroutine is left, whether the consumer goes on
// reading to the end or stops at once.
func TestPipeCancelledMidStream(t *testing.T) {
	for _, drain := range []bool{true, false} {
		for _, ordered := range []bool{false, true} {
			t.Run(fmt.Sprintf("drain=%t,ordered=%t", drain, ordered), func(t *testing.T) {
				testleak.AtCleanup(t)
				g := newGroup(t, openSims(t, 2), group.WithStreams(2))
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var running, started atomic.Int64
				opts := []group.PipeOption{}
				if ordered {
					opts = append(opts, group.Ordered())
				}
				out := group.Pipe(ctx, g, feedInts(ctx, 1<<30, nil), func(ctx context.Context, d *device.Device, s *streams.Stream, x int) (int, error) {
					started.Add(1)
					running.Add(1)
					defer running.Add(-1)
					return square(100*time.Microsecond)(ctx, d, s, x)
				}, opts...)
				for range 50 {
					r := <-out
					require.NoError(t, r.Err)
				}
				cancel()
				if drain {
					for r := range out {
						if r.Err != nil {
							require.ErrorIs(t, r.Err, context.Canceled)
						}
					}
					assert.Zero(t, running.Load(), "the output closed with a job running")
					n := started.Load()
					require.NoError(t, g.Do(context.Background(), hostJob(func(*device.Device) {})))
					assert.Equal(t, n, started.Load(), "a job of the pipe started after its output closed")
				}
				// Not drained: the leak check at cleanup waits for every goroutine of the
				// pipe, and of the feeder, to end.
			})
		}
	}
}

// Each item's job options (here an affinity Key) come from ItemOptions.
func TestPipeItemOptions(t *testing.T) {
	testleak.AtCleanup(t)
	ctx := context.Background()
	g := newGroup(t, openSims(t, 4), group.WithPolicy(group.Affinity))
	keyOf := func(x int) string { return fmt.Sprint("key", x%3) }
	out := group.Pipe(ctx, g, feedInts(ctx, 60, nil), func(_ context.Context, d *device.Device, _ *streams.Stream, x int) (int, error) {
		return d.Ordinal(), nil
	}, group.ItemOptions(func(x int) []group.JobOption { return []group.JobOption{group.Key(keyOf(x))} }))
	on := map[string]int{}
	for r := range out {
		require.NoError(t, r.Err)
		if d, ok := on[keyOf(r.Item)]; ok {
			assert.Equal(t, d, r.Value, "one key, one device")
		}
		on[keyOf(r.Item)] = r.Value
	}
	assert.Len(t, on, 3)
}

func TestPipeBadInput(t *testing.T) {
	testleak.AtCleanup(t)
	ctx := context.Background()
	g := newGroup(t, openSims(t, 1))
	in := make(chan int)
	close(in)
	only := func(out <-chan group.Result[int, int]) error {
		r, ok := <-out
		require.True(t, ok)
		_, more := <-out
		require.False(t, more, "one result, then the output closes")
		return r.Err
	}
	require.ErrorIs(t, only(group.Pipe(ctx, nil, in, square(0))), device.ErrInvalidArgument)
	require.ErrorIs(t, only(group.Pipe(ctx, g, nil, square(0))), device.ErrInvalidArgument)
	require.ErrorIs(t, only(group.Pipe[int, int](ctx, g, in, nil)), device.ErrInvalidArgument)
	err := only(group.Pipe(ctx, g, in, square(0), group.Window(0)))
	require.ErrorIs(t, err, device.ErrInvalidArgument)
	require.ErrorContains(t, err, "Window(0)")
	err = only(group.Pipe(ctx, g, in, square(0), group.ItemOptions(func(string) []group.JobOption { return nil })))
	require.ErrorIs(t, err, device.ErrInvalidArgument)
	require.ErrorContains(t, err, "ItemOptions")
	// A closed group: every item fails with ErrClosed, and the output still closes.
	require.NoError(t, g.Close(context.Background()))
	for r := range group.Pipe(ctx, g, feedInts(ctx, 3, nil), square(0)) {
		require.ErrorIs(t, r.Err, device.ErrClosed)
	}
}

// A device fails mid-stream and restarts (WithRestart): Idempotent items (ItemOptions) that
// were running on it run again elsewhere, so every item has its right result, in order, and
// each is counted done once.
func TestPipeThroughARestart(t *testing.T) {
	testleak.AtCleanup(t)
	ctx := context.Background()
	r, devs := newReopener(t, 2)
	g := newGroup(t, devs, group.WithRestart(r.open, fast()...))
	const n = 600
	out := group.Pipe(ctx, g, feedInts(ctx, n, nil), square(50*time.Microsecond), group.Ordered(),
		group.ItemOptions(func(int) []group.JobOption { return []group.JobOption{group.Idempotent()} }))
	next := 0
	for res := range out {
		require.NoError(t, res.Err, "item %d", res.Item)
		require.Equal(t, next, res.Index)
		require.Equal(t, res.Item*res.Item, res.Value)
		if next++; next == 100 {
			r.failNow(t, devs[0])
		}
	}
	require.Equal(t, n, next)
	restartedAt(t, g, 0, 1)
	var done, failed, retries uint64
	for _, st := range g.Stats().Devices {
		done, failed, retries = done+st.Done, failed+st.Failed, retries+st.Retries
	}
	t.Logf("%d items ran again after the failure", retries)
	assert.Equal(t, uint64(n), done, "each item counted once")
	assert.Zero(t, failed)
}
