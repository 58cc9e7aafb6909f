package actor

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFutureCompleteFirstWins(t *testing.T) {
	p := NewPromise[int]()
	f := p.Future()
	require.False(t, f.Ready())
	require.NoError(t, f.Err())
	_, err := f.Value()
	require.ErrorIs(t, err, ErrNotReady)
	done := f.Done() // asked for before completion: must still be closed by Complete

	require.True(t, p.Complete(1, nil))
	require.False(t, p.Complete(2, errSentinel))
	<-done
	<-f.Done()
	v, err := f.Value()
	require.NoError(t, err)
	require.Equal(t, 1, v)
	v, err = f.Await(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, v)
}

func TestFutureCompleted(t *testing.T) {
	f := Completed("x", errSentinel)
	require.True(t, f.Ready())
	require.ErrorIs(t, f.Err(), errSentinel)
	<-f.Done()
	v, err := f.Await(context.Background())
	require.Equal(t, "x", v)
	require.ErrorIs(t, err, errSentinel)
}

func TestFutureRacingCompleters(t *testing.T) {
	for range 200 {
		p := NewPromise[int]()
		f := p.Future()
		f.SetAwaitSpin(0)
		var wins atomic.Int32
		var wg sync.WaitGroup
		results := make(chan int, 4)
		for w := range 4 {
			wg.Go(func() {
				v, _ := f.Await(context.Background())
				results <- v
			})
			wg.Go(func() {
				if p.Complete(w, nil) {
					wins.Add(1)
				}
			})
		}
		wg.Wait()
		close(results)
		require.Equal(t, int32(1), wins.Load())
		first := -1
		for v := range results {
			if first < 0 {
				first = v
			}
			require.Equal(t, first, v, "every waiter sees the one winning value")
		}
	}
}

func TestFutureAwaitParksAndWakes(t *testing.T) {
	p := NewPromise[string]()
	f := p.Future()
	f.SetAwaitSpin(time.Microsecond) // spin briefly, then park
	go func() { time.Sleep(5 * time.Millisecond); p.Complete("late", nil) }()
	v, err := f.Await(context.Background())
	require.NoError(t, err)
	require.Equal(t, "late", v)

	var zero Promise[int] // the zero value works, parking at once
	go zero.Complete(4, nil)
	n, err := zero.Future().Await(context.Background())
	require.NoError(t, err)
	require.Equal(t, 4, n)
}

func TestFutureAwaitDeadline(t *testing.T) {
	p := NewPromise[int]()
	f := p.Future()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	_, err := f.Await(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	p.Complete(1, nil)
	v, err := f.Await(ctx) // a done future answers even with an ended context
	require.NoError(t, err)
	require.Equal(t, 1, v)
}

// A promise carries its own mailbox entry: sending one twice is refused, not queued twice.
func TestCallIntoRefusesASentPromise(t *testing.T) {
	a := newActor(t)
	ctx := context.Background()
	p := NewPromise[int]()
	f := p.Future()
	var runs atomic.Int32
	first := CallInto(ctx, a, p, func() (int, error) { runs.Add(1); return 1, nil })
	require.Same(t, f, first)
	second := CallInto(ctx, a, p, func() (int, error) { runs.Add(1); return 2, nil })
	require.NotSame(t, f, second)
	_, err := second.Await(ctx)
	assert.ErrorIs(t, err, ErrFutureReused)
	v, err := f.Await(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, v)
	_, err = Call(ctx, a, func() (int, error) { return 0, nil }).Await(ctx) // the actor still serves
	require.NoError(t, err)
	assert.Equal(t, int32(1), runs.Load())
}

// Completing a Call's future that a goroutine parked on asks its actor to hand off; a future
// nobody waits on, or one of no actor, does not.
func TestCompleteOfAParkedWaiterAsksForHandOff(t *testing.T) {
	a := &Actor{}
	quiet := &Promise[int]{f: Future[int]{owner: a}}
	require.True(t, quiet.Complete(1, nil))
	assert.False(t, a.woke.Load(), "no waiter was parked")

	waited := &Promise[int]{f: Future[int]{owner: a}}
	done := waited.Future().Done() // what Await parks on
	require.True(t, waited.Complete(2, nil))
	<-done
	assert.True(t, a.woke.Load(), "the parked waiter's wake is the actor's to hand off")

	a.woke.Store(false)
	orphan := NewPromise[int]()
	_ = orphan.Future().Done()
	require.True(t, orphan.Complete(3, nil))
	assert.False(t, a.woke.Load(), "a future of no actor asks nothing of one")
}

// A waiter parked on a long op gets its result, and the actor, having handed off, goes on
// serving: the hand-off clears the request and loses no message.
func TestParkedWaiterIsHandedOff(t *testing.T) {
	a, err := New(WithAwaitSpin(0)) // park at once
	require.NoError(t, err)
	defer a.Close()
	ctx := context.Background()
	release := make(chan struct{})
	f := Call(ctx, a, func() (int, error) { <-release; return 7, nil })
	got := make(chan int)
	go func() {
		v, err := f.Await(ctx)
		assert.NoError(t, err)
		got <- v
	}()
	require.Eventually(t, func() bool { return f.ch.Load() != nil }, 5*time.Second, time.Millisecond, "the waiter parks")
	close(release)
	require.Equal(t, 7, <-got)
	require.Eventually(t, func() bool { return !a.woke.Load() }, 5*time.Second, time.Millisecond, "the actor handed off")
	for i := range 100 {
		v, err := Call(ctx, a, func() (int, error) { return i, nil }).Await(ctx)
		require.NoError(t, err)
		require.Equal(t, i, v)
	}
}

func TestAwaitSpinReadsWhatWasSet(t *testing.T) {
	f := NewPromise[int]().Future()
	assert.Equal(t, DefaultAwaitSpin, f.AwaitSpin())
	f.SetAwaitSpin(3 * time.Millisecond)
	assert.Equal(t, 3*time.Millisecond, f.AwaitSpin())
	f.SetAwaitSpin(-time.Second)
	assert.Zero(t, f.AwaitSpin(), "a negative spin parks at once")
}

func TestFutureWaitReturnsTheError(t *testing.T) {
	ctx := context.Background()
	require.NoError(t, Completed(1, nil).Wait(ctx))
	require.ErrorIs(t, Completed(0, errSentinel).Wait(ctx), errSentinel)
	p := NewPromise[int]()
	short, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	require.ErrorIs(t, p.Future().Wait(short), context.DeadlineExceeded)
}

// WaitAll waits for every future, even after one failed, and reports the first failure in
// argument order.
func TestWaitAllWaitsForEveryFuture(t *testing.T) {
	ctx := context.Background()
	first := errors.New("first")
	slow := NewPromise[string]()
	failed := NewPromise[int]()
	failed.Complete(0, first)
	late := errors.New("late")
	go func() {
		time.Sleep(5 * time.Millisecond)
		slow.Complete("", late)
	}()
	err := WaitAll(ctx, Completed(struct{}{}, nil), failed.Future(), nil, slow.Future())
	require.ErrorIs(t, err, first)
	require.True(t, slow.Future().Ready(), "WaitAll returned before a future it was given completed")
	require.NoError(t, WaitAll(ctx))
	require.ErrorIs(t, WaitAll(ctx, Completed(0, nil), slow.Future()), late)

	pending := NewPromise[int]()
	short, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	require.ErrorIs(t, WaitAll(short, Completed(0, first), pending.Future()), context.DeadlineExceeded,
		"an ended context is the answer, not an earlier future's error")
}

func TestWithClosedError(t *testing.T) {
	mine := errors.New("mine: closed")
	a, err := New(WithClosedError(mine))
	require.NoError(t, err)
	require.NoError(t, a.Close())
	_, err = Call(context.Background(), a, func() (int, error) { return 1, nil }).Await(context.Background())
	require.ErrorIs(t, err, mine)
	require.ErrorIs(t, a.Post(context.Background(), func() {}), mine)
}

// OnComplete runs once, before any waiter sees the result, whoever completes the future:
// the producer, or the actor refusing the op (closed here).
func TestOnCompleteRunsBeforeWaitersWake(t *testing.T) {
	var released atomic.Int32
	p := NewPromise[int]()
	p.OnComplete(CompleteFunc[int](func(v int, err error) {
		assert.Equal(t, 7, v)
		assert.NoError(t, err)
		released.Add(1)
	}))
	seen := make(chan int32, 1)
	go func() {
		_ = p.Future().Wait(context.Background())
		seen <- released.Load()
	}()
	time.Sleep(time.Millisecond)
	require.True(t, p.Complete(7, nil))
	require.False(t, p.Complete(8, nil))
	assert.Equal(t, int32(1), <-seen, "the waiter woke after OnComplete ran")
	assert.Equal(t, int32(1), released.Load(), "once")

	a, err := New()
	require.NoError(t, err)
	require.NoError(t, a.Close())
	q := NewPromise[int]()
	var got error
	q.OnComplete(CompleteFunc[int](func(_ int, err error) { got = err }))
	f := CallInto(context.Background(), a, q, func() (int, error) { return 1, nil })
	require.Error(t, f.Err())
	assert.Equal(t, f.Err(), got, "a refused op runs it too, with the refusal")
}
