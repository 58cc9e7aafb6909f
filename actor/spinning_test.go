package actor

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpinningActorsLeaveAPToSpare: actors whose idle hooks always report work in progress
// would each spin on a P of their own; with two Ps only one spins at a time, the others park
// with the idle-poll timer, so the rest of the program keeps a P: a goroutine that sleeps
// wakes in about its sleep, not at the scheduler's next preemption, and every actor still
// answers its calls.
func TestSpinningActorsLeaveAPToSpare(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	var working atomic.Bool // an actor with work in progress does not exit: cleared before Close
	working.Store(true)
	busy := func(bool, time.Duration) bool { return working.Load() }
	begin := time.Now()
	var actors []*Actor
	for range 3 {
		actors = append(actors, newActor(t, WithIdle(busy), WithBusySpin(time.Second)))
	}
	ctx := context.Background()
	for _, a := range actors {
		_, err := Call(ctx, a, func() (int, error) { return 0, nil }).Await(ctx)
		require.NoError(t, err)
	}

	most, sleeps := int32(0), 0
	start := time.Now()
	for time.Since(start) < 200*time.Millisecond {
		most = max(most, spinningActors.Load())
		time.Sleep(100 * time.Microsecond)
		sleeps++
	}
	assert.Equal(t, int32(1), most, "one actor spins at a time, leaving the other P")
	// A sleep of 100 µs takes about a millisecond at worst; with both Ps held by spinning
	// actors each would wait for a preemption, 10 ms or more.
	assert.Greater(t, sleeps, 25, "the sleeping goroutine was held up")

	for _, a := range actors {
		_, err := Call(ctx, a, func() (int, error) { return 0, nil }).Await(ctx)
		require.NoError(t, err, "a parked actor still answers")
	}
	working.Store(false)
	var spin time.Duration
	for _, a := range actors {
		require.NoError(t, a.Close())
		spin += a.Stats().Spin
	}
	assert.Less(t, spin, time.Since(begin)*5/4, "their spinning adds up to one P's time at most, not three")
}
