package actor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGuardRefusesCalls(t *testing.T) {
	failed := errors.New("device failed")
	var broken atomic.Bool
	var ran atomic.Int32
	a, err := New(WithGuard(func() error {
		if broken.Load() {
			return failed
		}
		return nil
	}))
	require.NoError(t, err)
	defer a.Close()
	ctx := context.Background()
	op := func() (int, error) { ran.Add(1); return 7, nil }

	v, err := Call(ctx, a, op).Await(ctx)
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	broken.Store(true)
	_, err = Call(ctx, a, op).Await(ctx)
	assert.ErrorIs(t, err, failed)
	assert.Equal(t, int32(1), ran.Load(), "a refused op never runs")
}

func TestErrorMapSeesAndMapsOpErrors(t *testing.T) {
	var seen []error
	mapped := errors.New("mapped")
	a, err := New(WithErrorMap(func(err error) error { // actor thread only
		seen = append(seen, err)
		return fmt.Errorf("%w: %w", mapped, err)
	}))
	require.NoError(t, err)
	ctx := context.Background()
	boom := errors.New("boom")
	_, err = Call(ctx, a, func() (int, error) { return 0, boom }).Await(ctx)
	require.ErrorIs(t, err, boom)
	require.ErrorIs(t, err, mapped, "the future has the mapped error")
	_, err = Call(ctx, a, func() (int, error) { return 1, nil }).Await(ctx)
	require.NoError(t, err)
	require.NoError(t, a.Close()) // Close orders the map's writes before the read below
	assert.Equal(t, []error{boom}, seen)
}

func TestCallIntoPendingCompletesLater(t *testing.T) {
	a, err := New()
	require.NoError(t, err)
	defer a.Close()
	ctx := context.Background()
	var later func()
	f := CallInto(ctx, a, NewPromise[int](), nil)
	_, err = f.Await(ctx)
	require.ErrorIs(t, err, ErrNilOp)

	gp := NewPromise[int]()
	g := CallInto(ctx, a, gp, func() (int, error) {
		later = func() { gp.Complete(42, nil) }
		return 0, ErrPending
	})
	require.NoError(t, a.Post(ctx, func() {})) // the op ran: FIFO
	_, err = Call(ctx, a, func() (int, error) { return 0, nil }).Await(ctx)
	require.NoError(t, err)
	assert.False(t, g.Ready(), "ErrPending leaves the future pending")
	later()
	v, err := g.Await(ctx)
	require.NoError(t, err)
	assert.Equal(t, 42, v)

	// A refused or panicking op still completes its future.
	refused := errors.New("refused")
	b, err := New(WithGuard(func() error { return refused }))
	require.NoError(t, err)
	defer b.Close()
	h := CallInto(ctx, b, NewPromise[int](), func() (int, error) { return 0, ErrPending })
	_, err = h.Await(ctx)
	assert.ErrorIs(t, err, refused)
	p := CallInto(ctx, a, NewPromise[int](), func() (int, error) { panic("boom") })
	_, err = p.Await(ctx)
	var pe *PanicError
	assert.ErrorAs(t, err, &pe)
}

func TestIdleHookKnowsWhenMessagesWait(t *testing.T) {
	type call struct {
		waiting bool
		ran     int64 // of the ten messages below, how many had run
	}
	var mu sync.Mutex
	var seen []call
	var ran atomic.Int64
	a := newActor(t, WithBatch(2), WithIdle(func(waiting bool, _ time.Duration) bool {
		mu.Lock()
		seen = append(seen, call{waiting, ran.Load()})
		mu.Unlock()
		return false
	}))
	ctx := context.Background()
	// Ten messages sent while the actor is held are drained as one list, which the hook
	// polls between batches of two. (A PostBatch is one message, not a list.)
	started, hold := make(chan struct{}), make(chan struct{})
	require.NoError(t, a.Post(ctx, func() { close(started); <-hold }))
	<-started
	for range 10 {
		require.NoError(t, a.Post(ctx, func() { ran.Add(1) }))
	}
	close(hold)
	_, err := Call(ctx, a, func() (int, error) { return 0, nil }).Await(ctx)
	require.NoError(t, err)
	saw := func(match func(call) bool) func() bool {
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			return slices.ContainsFunc(seen, match)
		}
	}
	assert.True(t, saw(func(c call) bool { return c.waiting && c.ran > 0 && c.ran < 10 })(),
		"between batches of a drained list, messages are waiting")
	// Once the mailbox is empty the actor polls the hook while it spins.
	assert.Eventually(t, saw(func(c call) bool { return !c.waiting && c.ran == 10 }), 5*time.Second, time.Millisecond,
		"after the last message, none are")
}

// The idle hook is handed the actor's clock: never going backwards, and never ahead of the
// time since New.
func TestIdleHookGetsTheClock(t *testing.T) {
	var mu sync.Mutex
	var seen []time.Duration
	before := time.Now()
	a := newActor(t, WithIdle(func(_ bool, now time.Duration) bool {
		mu.Lock()
		seen = append(seen, now)
		mu.Unlock()
		return false
	}))
	ctx := context.Background()
	for range 50 {
		_, err := Call(ctx, a, func() (int, error) { time.Sleep(10 * time.Microsecond); return 0, nil }).Await(ctx)
		require.NoError(t, err)
	}
	require.NoError(t, a.Close())
	elapsed := time.Since(before)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, seen)
	assert.True(t, slices.IsSorted(seen), "the clock never goes backwards")
	assert.GreaterOrEqual(t, seen[0], time.Duration(0))
	assert.LessOrEqual(t, seen[len(seen)-1], elapsed)
	assert.Greater(t, seen[len(seen)-1], 50*10*time.Microsecond, "the ops' sleeps are on the clock")
}

// refuserTask records whether it ran or was told it never would.
type refuserTask struct {
	ran     bool
	refused error
}

func (r *refuserTask) Run(*Promise[int]) (int, error) { r.ran = true; return 1, nil }
func (r *refuserTask) Refused(err error)              { r.refused = err }

func TestRefuserIsToldItWillNotRun(t *testing.T) {
	ctx := context.Background()
	no := errors.New("refused")
	var refuse atomic.Bool
	a, err := New(WithGuard(func() error {
		if refuse.Load() {
			return no
		}
		return nil
	}))
	require.NoError(t, err)
	defer a.Close()

	ran := &refuserTask{}
	_, err = CallTask(ctx, a, NewPromise[int](), Task[int](ran)).Await(ctx)
	require.NoError(t, err)
	assert.True(t, ran.ran)
	assert.NoError(t, ran.refused, "a task that ran is not refused")

	refuse.Store(true)
	skipped := &refuserTask{}
	_, err = CallTask(ctx, a, NewPromise[int](), Task[int](skipped)).Await(ctx)
	require.ErrorIs(t, err, no)
	assert.False(t, skipped.ran)
	assert.ErrorIs(t, skipped.refused, no, "told before its future completed")
}
