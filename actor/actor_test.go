package actor

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/testleak"
)

func newActor(t *testing.T, opts ...Option) *Actor {
	t.Helper()
	a, err := New(opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// gate blocks the actor inside an op until the returned release is called, so tests can
// fill the mailbox deterministically.
func gate(t *testing.T, a *Actor) (release func()) {
	t.Helper()
	entered, open := make(chan struct{}), make(chan struct{})
	require.NoError(t, a.Post(context.Background(), func() { close(entered); <-open }))
	<-entered
	var once sync.Once
	release = func() { once.Do(func() { close(open) }) }
	t.Cleanup(release)
	return release
}

func TestPerSenderFIFO(t *testing.T) {
	a := newActor(t)
	const senders, per = 8, 500
	seen := make([][]int, senders) // only touched on the actor thread
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			for i := range per {
				assert.NoError(t, a.Post(context.Background(), func() { seen[s] = append(seen[s], i) }))
			}
		})
	}
	wg.Wait()
	_, err := Call(context.Background(), a, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
	require.NoError(t, err)
	for s := range senders {
		require.Len(t, seen[s], per)
		for i, v := range seen[s] {
			require.Equal(t, i, v, "sender %d out of order", s)
		}
	}
}

var errSentinel = errors.New("sentinel")

func TestCallValuesAndErrors(t *testing.T) {
	a := newActor(t)
	ctx := context.Background()

	v, err := Call(ctx, a, func() (string, error) { return "hi", nil }).Await(ctx)
	require.NoError(t, err)
	require.Equal(t, "hi", v)

	f := Call(ctx, a, func() (int, error) { return 7, fmt.Errorf("wrapped: %w", errSentinel) })
	v2, err := f.Await(ctx)
	require.ErrorIs(t, err, errSentinel)
	require.Equal(t, 7, v2, "a value returned with an error is kept")
	require.ErrorIs(t, f.Err(), errSentinel)
	require.True(t, f.Ready())
}

func TestPanicBecomesPanicError(t *testing.T) {
	var handled atomic.Int32
	a := newActor(t, WithPanicHandler(func(*PanicError) { handled.Add(1) }))
	ctx := context.Background()

	_, err := Call(ctx, a, func() (int, error) { panic("boom") }).Await(ctx)
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "boom", pe.Value)
	require.Contains(t, err.Error(), "boom")
	require.NotEmpty(t, pe.Stack)

	// A runtime error panic stays matchable through the PanicError.
	_, err = Call(ctx, a, func() (int, error) {
		var m map[string]int
		//lint:ignore SA5000 the runtime error is the point
		m["x"] = 1
		return 0, nil
	}).Await(ctx)
	var re runtime.Error
	require.ErrorAs(t, err, &re)

	require.NoError(t, a.Post(ctx, func() { panic("post") }))
	require.NoError(t, a.PostBatch(ctx, []func(){func() { panic("b1") }, func() {}, func() { panic(errSentinel) }}))

	v, err := Call(ctx, a, func() (int, error) { return 42, nil }).Await(ctx)
	require.NoError(t, err, "the actor keeps serving after panics")
	require.Equal(t, 42, v)
	require.Equal(t, uint64(5), a.Stats().Panics)
	require.Equal(t, int32(5), handled.Load())
}

func TestCloseFinishesAcceptedWork(t *testing.T) {
	a, err := New(WithMailbox(64))
	require.NoError(t, err)
	ctx := context.Background()
	var ran atomic.Int64
	done := make(chan error, 1)
	go func() {
		for range 1000 {
			if err := a.Post(ctx, func() { ran.Add(1) }); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	require.NoError(t, <-done)
	require.NoError(t, a.Close())
	require.Equal(t, int64(1000), ran.Load())

	select {
	case <-a.Done():
	default:
		t.Fatal("Done not closed after Close")
	}
	require.ErrorIs(t, a.Post(ctx, func() {}), ErrClosed)
	require.ErrorIs(t, a.PostBatch(ctx, []func(){func() {}}), ErrClosed)
	f := Call(ctx, a, func() (int, error) { return 1, nil })
	require.True(t, f.Ready(), "a failed send returns a completed future")
	_, err = f.Await(ctx)
	require.ErrorIs(t, err, ErrClosed)
	require.NoError(t, a.Close(), "Close is idempotent")
}

func TestCloseConcurrentWithSenders(t *testing.T) {
	for round := range 5 {
		a, err := New(WithMailbox(4), WithName(fmt.Sprintf("r%d", round)))
		require.NoError(t, err)
		var ran, accepted, refused atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for s := range 32 {
			wg.Go(func() {
				<-start
				for i := 0; ; i++ {
					var err error
					if (s+i)%3 == 0 {
						err = Call(context.Background(), a, func() (int, error) { ran.Add(1); return 0, nil }).Err()
					} else {
						err = a.Post(context.Background(), func() { ran.Add(1) })
					}
					if errors.Is(err, ErrClosed) {
						refused.Add(1)
						return
					}
					if err != nil {
						t.Error(err)
						return
					}
					accepted.Add(1)
				}
			})
		}
		close(start)
		// Close once the senders are under way, however slowly a loaded host starts them.
		for accepted.Load() < 8 {
			runtime.Gosched()
		}
		var cwg sync.WaitGroup
		for range 3 {
			cwg.Go(func() { assert.NoError(t, a.Close()) })
		}
		cwg.Wait()
		wg.Wait()
		require.Equal(t, accepted.Load(), ran.Load(), "every accepted op ran, none lost")
		require.Equal(t, int64(32), refused.Load())
		require.Positive(t, accepted.Load())
		require.Equal(t, uint64(ran.Load()), a.Stats().Ops)
	}
}

func TestFullMailboxBlocksSender(t *testing.T) {
	a := newActor(t, WithMailbox(1))
	release := gate(t, a)
	ctx := context.Background()
	require.NoError(t, a.Post(ctx, func() {})) // fills the mailbox

	tctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	require.ErrorIs(t, a.Post(tctx, func() {}), context.DeadlineExceeded)
	require.GreaterOrEqual(t, time.Since(start), 15*time.Millisecond, "the sender blocked")

	cctx, ccancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- a.Post(cctx, func() {}) }()
	select {
	case err := <-errc:
		t.Fatalf("send into a full mailbox returned early: %v", err)
	case <-time.After(10 * time.Millisecond):
	}
	ccancel()
	require.ErrorIs(t, <-errc, context.Canceled)

	f := Call(cctx, a, func() (int, error) { return 1, nil })
	require.ErrorIs(t, f.Err(), context.Canceled, "an ended context never enqueues")

	release()
	_, err := Call(ctx, a, func() (int, error) { return 0, nil }).Await(ctx)
	require.NoError(t, err)
}

// Close while senders are blocked on a full mailbox: each gets in and runs, none hangs.
func TestCloseWithBlockedSenders(t *testing.T) {
	a, err := New(WithMailbox(1))
	require.NoError(t, err)
	release := gate(t, a)
	var ran atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() { errs <- a.Post(context.Background(), func() { ran.Add(1) }) })
	}
	time.Sleep(5 * time.Millisecond)
	closed := make(chan error, 1)
	go func() { closed <- a.Close() }()
	time.Sleep(5 * time.Millisecond)
	release()
	require.NoError(t, <-closed)
	wg.Wait()
	close(errs)
	ok := 0
	for err := range errs {
		if err == nil {
			ok++
		} else {
			require.ErrorIs(t, err, ErrClosed)
		}
	}
	require.Equal(t, int64(ok), ran.Load())
}

func TestAwaitCancelReturnsPromptly(t *testing.T) {
	base := testleak.Base()
	a, err := New()
	require.NoError(t, err)
	release := gate(t, a)
	f := Call(context.Background(), a, func() (int, error) { return 5, nil })

	// Already cancelled.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = f.Await(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, f.Ready(), "an ended context is answered without waiting for the op")

	// Cancelled while parked.
	ctx2, cancel2 := context.WithCancel(context.Background())
	go func() { time.Sleep(30 * time.Millisecond); cancel2() }()
	_, err = f.Await(ctx2)
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, f.Ready(), "the gated op cannot have run: the waiter left at its cancellation")

	release()
	v, err := f.Await(context.Background())
	require.NoError(t, err, "the op still ran after its waiter gave up")
	require.Equal(t, 5, v)
	require.NoError(t, a.Close())
	testleak.Settle(t, base)
}

func TestNoGoroutineLeak(t *testing.T) {
	base := testleak.Base()
	for range 5 {
		a, err := New(WithIdle(func(bool, time.Duration) bool { return false }))
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		for i := range 100 {
			f := Call(context.Background(), a, func() (int, error) { time.Sleep(10 * time.Microsecond); return i, nil })
			_, _ = f.Await(ctx) // many of these give up
			_ = f.Done()
		}
		cancel()
		require.NoError(t, a.Close())
	}
	testleak.Settle(t, base)
}

func TestInitError(t *testing.T) {
	base := testleak.Base()
	a, err := New(WithName("gpu0"), WithInit(func() error { return errSentinel }))
	require.ErrorIs(t, err, errSentinel)
	require.Contains(t, err.Error(), "gpu0")
	require.Nil(t, a)

	_, err = New(WithInit(func() error { panic("init boom") }))
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	testleak.Settle(t, base)
}

func TestShutdownRunsAfterLastOp(t *testing.T) {
	var order []string // actor thread only until Close returns
	a, err := New(WithShutdown(func() { order = append(order, "shutdown") }))
	require.NoError(t, err)
	for i := range 3 {
		require.NoError(t, a.Post(context.Background(), func() { order = append(order, fmt.Sprint(i)) }))
	}
	require.NoError(t, a.Close())
	require.Equal(t, []string{"0", "1", "2", "shutdown"}, order)

	b, err := New(WithShutdown(func() { panic("shutdown boom") }))
	require.NoError(t, err)
	var pe *PanicError
	require.ErrorAs(t, b.Close(), &pe)
}

// tracker simulates outstanding GPU work: ops register futures with a completion time, and
// only the idle hook, polling, completes them.
type tracker struct {
	pending []trackedOp
	polls   atomic.Int64
}

type trackedOp struct {
	at time.Time
	f  *Promise[time.Time]
}

func (tr *tracker) idle(bool, time.Duration) bool {
	tr.polls.Add(1)
	now := time.Now()
	kept := tr.pending[:0]
	for _, p := range tr.pending {
		if now.After(p.at) {
			p.f.Complete(now, nil)
		} else {
			kept = append(kept, p)
		}
	}
	clear(tr.pending[len(kept):])
	tr.pending = kept
	return len(tr.pending) > 0
}

func TestIdleBusyPolling(t *testing.T) {
	for _, spin := range []time.Duration{0, DefaultSpin} {
		t.Run(fmt.Sprint("spin=", spin), func(t *testing.T) {
			tr := &tracker{}
			a := newActor(t, WithIdle(tr.idle), WithSpin(spin), WithBusySpin(spin), WithIdlePoll(200*time.Microsecond))
			ctx := context.Background()
			const delay = 20 * time.Millisecond
			p := NewPromise[time.Time]()
			f := p.Future()
			start := time.Now()
			_, err := Call(ctx, a, func() (int, error) {
				tr.pending = append(tr.pending, trackedOp{start.Add(delay), p})
				return 0, nil
			}).Await(ctx)
			require.NoError(t, err)
			polls0 := a.Stats()
			at, err := f.Await(ctx)
			require.NoError(t, err)
			require.GreaterOrEqual(t, at.Sub(start), delay)
			require.Equal(t, polls0.Ops, a.Stats().Ops, "no messages were needed to complete it: the idle hook did")
			require.Greater(t, tr.polls.Load(), int64(1), "the hook polled more than once")

			// Without a busy spin the actor parks between polls (a 200µs timer) and is woken
			// by that timer to poll again.
			if spin == 0 {
				require.Greater(t, a.Stats().Parks, polls0.Parks)
			}
		})
	}
}

// TestBusySpinKeepsPolling: while the idle hook reports work in progress, the actor polls
// without parking for the busy-spin window, so a completion is seen within microseconds, not
// after a timer that oversleeps.
func TestBusySpinKeepsPolling(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("the actor never spins with one P")
	}
	tr := &tracker{}
	// The caller parks at once, leaving the process's spin token to the actor on two Ps.
	a := newActor(t, WithIdle(tr.idle), WithBusySpin(time.Second), WithAwaitSpin(0))
	ctx := context.Background()
	p := NewPromise[time.Time]()
	f := p.Future()
	f.SetAwaitSpin(0)
	start := time.Now()
	_, err := Call(ctx, a, func() (int, error) {
		tr.pending = append(tr.pending, trackedOp{start.Add(5 * time.Millisecond), p})
		return 0, nil
	}).Await(ctx)
	require.NoError(t, err)
	before := a.Stats()
	_, err = f.Await(ctx)
	require.NoError(t, err)
	// Being descheduled on a loaded machine is not parking: the actor parks only when it
	// decides to, and while the hook reports busy (for up to the second's busy spin) it must
	// not, so the completion is found by polling alone.
	after := a.Stats()
	assert.LessOrEqual(t, after.Parks, before.Parks+1, "no park while busy; at most one once idle again")
	assert.Equal(t, before.Ops, after.Ops, "no message completed it: the polling hook did")
}

// TestIdleWindowCountsFromTheLastWork: an actor that polled work in progress for longer than
// its spin window still spins the whole window once the work is done, so that the caller's
// next message, sent right after its await returns, finds it awake; only then does it park.
func TestIdleWindowCountsFromTheLastWork(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("the actor never spins with one P")
	}
	const window, work = 200 * time.Millisecond, 300 * time.Millisecond
	tr := &tracker{}
	a := newActor(t, WithIdle(tr.idle), WithSpin(window), WithBusySpin(time.Minute), WithAwaitSpin(0))
	ctx := context.Background()
	p := NewPromise[time.Time]()
	f := p.Future()
	f.SetAwaitSpin(0)
	_, err := Call(ctx, a, func() (int, error) {
		tr.pending = append(tr.pending, trackedOp{time.Now().Add(work), p})
		return 0, nil
	}).Await(ctx)
	require.NoError(t, err)
	before := a.Stats()
	_, err = f.Await(ctx)
	require.NoError(t, err)
	time.Sleep(window / 10) // time for a park decided at the work's end to be counted
	assert.Equal(t, before.Parks, a.Stats().Parks, "the idle window starts when the work ends, not when the spin began")
	assert.Eventually(t, func() bool { return a.Stats().Parks > before.Parks }, 10*time.Second, time.Millisecond,
		"the actor parks once the window has passed")
}

func TestCloseWaitsForBusyIdle(t *testing.T) {
	tr := &tracker{}
	a, err := New(WithIdle(tr.idle))
	require.NoError(t, err)
	p := NewPromise[time.Time]()
	require.NoError(t, a.Post(context.Background(), func() {
		tr.pending = append(tr.pending, trackedOp{time.Now().Add(10 * time.Millisecond), p})
	}))
	require.NoError(t, a.Close())
	require.True(t, p.Future().Ready(), "Close let the idle hook finish tracked work first")
}

func TestSpinThenPark(t *testing.T) {
	ctx := context.Background()
	noop := func() (int, error) { return 0, nil }

	parker := newActor(t, WithSpin(0))
	for range 20 {
		before := parker.Stats().Parks
		_, err := Call(ctx, parker, noop).Await(ctx)
		require.NoError(t, err)
		require.Eventually(t, func() bool { return parker.Stats().Parks > before }, 10*time.Second, 50*time.Microsecond,
			"WithSpin(0) parks whenever idle")
	}

	if runtime.GOMAXPROCS(0) < 2 {
		return // the actor never spins with one P
	}
	// A window far longer than the loop's gaps, even on a loaded machine: the actor parks only
	// when no message comes within it.
	// Its callers park at once: an awaiting caller's spin would take the process's spin token
	// that the actor's own spin needs on a host of two Ps.
	spinner := newActor(t, WithSpin(10*time.Second), WithAwaitSpin(0))
	// Let it settle into its first spin window.
	_, err := Call(ctx, spinner, noop).Await(ctx)
	require.NoError(t, err)
	p0 := spinner.Stats().Parks
	for range 2000 {
		_, err := Call(ctx, spinner, noop).Await(ctx)
		require.NoError(t, err)
	}
	require.LessOrEqual(t, spinner.Stats().Parks-p0, uint64(3), "back-to-back calls are caught while spinning")
}

func TestPostBatchRunsInOrderAsOneMessage(t *testing.T) {
	a := newActor(t)
	ctx := context.Background()
	var got []int
	fns := make([]func(), 100)
	for i := range fns {
		fns[i] = func() { got = append(got, i) }
	}
	before := a.Stats()
	require.NoError(t, a.PostBatch(ctx, fns))
	fns[0] = nil // the batch was copied; reusing the slice is safe
	_, err := Call(ctx, a, func() (int, error) { return 0, nil }).Await(ctx)
	require.NoError(t, err)
	after := a.Stats()
	require.Len(t, got, 100)
	for i, v := range got {
		require.Equal(t, i, v)
	}
	require.Equal(t, uint64(101), after.Ops-before.Ops)
	require.LessOrEqual(t, after.Batches-before.Batches, uint64(2))
}

func TestBatchDraining(t *testing.T) {
	a := newActor(t, WithBatch(64))
	release := gate(t, a)
	ctx := context.Background()
	fs := make([]*Future[int], 512)
	for i := range fs {
		fs[i] = Call(ctx, a, func() (int, error) { return i, nil })
	}
	before := a.Stats()
	release()
	for i, f := range fs {
		v, err := f.Await(ctx)
		require.NoError(t, err)
		require.Equal(t, i, v)
	}
	s := a.Stats()
	ops, batches := s.Ops-before.Ops, s.Batches-before.Batches
	require.Equal(t, uint64(512), ops)
	require.LessOrEqual(t, batches, uint64(512/64+3), "queued ops drain in batches of up to 64")
	require.Less(t, s.Batches, s.Ops)
}

func TestBadInput(t *testing.T) {
	for _, opt := range []Option{WithMailbox(0), WithMailbox(-1), WithBatch(0), WithSpin(-1), WithAwaitSpin(-1), WithIdlePoll(0)} {
		a, err := New(opt)
		require.ErrorIs(t, err, ErrBadOption)
		require.Nil(t, a)
	}
	a := newActor(t, nil) // a nil option is ignored
	ctx := context.Background()
	require.ErrorIs(t, a.Post(ctx, nil), ErrNilOp)
	require.ErrorIs(t, a.PostBatch(ctx, []func(){func() {}, nil}), ErrNilOp)
	require.NoError(t, a.PostBatch(ctx, nil))
	_, err := Call[int](ctx, a, nil).Await(ctx)
	require.ErrorIs(t, err, ErrNilOp)

	v, err := Call(ctx, a, func() (int, error) { return 3, nil }).Await(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, v)
	require.Equal(t, uint64(1), a.Stats().Ops, "rejected ops never reached the actor")
}

func TestGoexitInOpDoesNotHang(t *testing.T) {
	a, err := New(WithName("g"))
	require.NoError(t, err)
	ctx := context.Background()
	f := Call(ctx, a, func() (int, error) { runtime.Goexit(); return 0, nil })
	_, err = f.Await(ctx)
	require.ErrorIs(t, err, ErrClosed)
	<-a.Done()
	require.ErrorIs(t, a.Close(), ErrClosed)
	require.ErrorIs(t, a.Post(ctx, func() {}), ErrClosed)
}

func TestUnlockedThreadOption(t *testing.T) {
	a := newActor(t, WithLockedThread(false), WithAwaitSpin(0))
	v, err := Call(context.Background(), a, func() (int, error) { return 9, nil }).Await(context.Background())
	require.NoError(t, err)
	require.Equal(t, 9, v)
	require.Equal(t, "", a.Name())
}
