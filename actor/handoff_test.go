package actor

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A goroutine the actor wakes while a long run of messages keeps it busy runs within about
// handOffAfter, even where no other P is free to steal it: the actor yields its P to it
// rather than hold it until the list ends or the runtime preempts the actor.
func TestBusyActorHandsOffWhatItWoke(t *testing.T) {
	setPs(t, 2)
	// A loaded machine's scheduler may keep the waiter's thread off its CPU for the whole
	// list now and then; without the hand-off the waiter always waits for the list (which is
	// shorter than the runtime's preemption), so one attempt in three is proof enough.
	const attempts = 3
	for i := range attempts {
		woke, last, handOffs := busyActorWake(t)
		if woke < last {
			assert.Positive(t, handOffs)
			return
		}
		t.Logf("attempt %d: the woken goroutine ran %v after the list", i+1, time.Duration(woke-last))
	}
	t.Fatalf("in %d attempts the woken goroutine waited for the whole list every time", attempts)
}

// busyActorWake wakes a parked waiter from the head of an 8 ms list of messages on an actor
// whose P nobody steals from, and returns when the waiter ran and when the list ended (unix
// nanoseconds), and the actor's hand-offs meanwhile.
func busyActorWake(t *testing.T) (woke, last int64, handOffs uint64) {
	ctx := context.Background()
	a, err := New(WithAwaitSpin(0))
	require.NoError(t, err)
	defer func() { require.NoError(t, a.Close()) }()

	// The other P runs a goroutine that never blocks: nobody steals from the actor's P.
	var stop atomic.Bool
	defer stop.Store(true)
	go func() {
		for !stop.Load() {
		}
	}()

	gate := make(chan struct{})
	held := Call(ctx, a, func() (struct{}, error) { <-gate; return struct{}{}, nil })
	woken := Call(ctx, a, func() (struct{}, error) { return struct{}{}, nil })
	wokeAt := make(chan time.Time, 1)
	go func() {
		_, _ = woken.Await(ctx) // parks: no spin window
		wokeAt <- time.Now()
	}()
	const msgs, each = 40, 200 * time.Microsecond // 8 ms of work after the wake
	var lastAt atomic.Int64
	for i := range msgs {
		require.NoError(t, a.Post(ctx, func() {
			for start := time.Now(); time.Since(start) < each; {
			}
			if i == msgs-1 {
				lastAt.Store(time.Now().UnixNano())
			}
		}))
	}
	time.Sleep(2 * time.Millisecond) // the waiter parks
	before := a.Stats().HandOffs
	close(gate)
	require.NoError(t, held.Wait(ctx))
	got := <-wokeAt
	require.Eventually(t, func() bool { return lastAt.Load() != 0 }, 10*time.Second, time.Millisecond)
	return got.UnixNano(), lastAt.Load(), a.Stats().HandOffs - before
}
