package actor

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/spin"
)

// TestSpinningActorsLeaveAPToSpare: actors whose idle hooks always report work in progress
// would each spin on a P of their own; with two Ps the process's spin budget lets one spin at
// a time, the others are refused and park with the idle-poll timer, and every actor still
// answers its calls. The budget's own counters say so, not a clock.
func TestSpinningActorsLeaveAPToSpare(t *testing.T) {
	setPs(t, 2)
	var working atomic.Bool // an actor with work in progress does not exit: cleared before Close
	working.Store(true)
	busy := func(bool, time.Duration) bool { return working.Load() }
	budget := spin.Process()
	var actors []*Actor
	for range 3 {
		actors = append(actors, newActor(t, WithIdle(busy), WithBusySpin(time.Hour), WithAwaitSpin(0)))
	}
	require.Equal(t, 1, budget.Stats().Limit, "GOMAXPROCS 2 leaves one token")
	budget.ResetPeak()
	before := budget.Stats()

	ctx := context.Background()
	// Each actor, once woken by a call, goes back to spinning while busy: three want the one
	// token, so the budget refuses some of them for as long as they stay busy.
	require.Eventually(t, func() bool {
		for _, a := range actors {
			if _, err := Call(ctx, a, func() (int, error) { return 0, nil }).Await(ctx); err != nil {
				return false
			}
		}
		return budget.Stats().Refusals > before.Refusals
	}, 10*time.Second, time.Millisecond, "three busy actors against one token")
	assert.Equal(t, 1, budget.Stats().Peak, "one actor spins at a time, leaving the other P")

	for _, a := range actors {
		_, err := Call(ctx, a, func() (int, error) { return 0, nil }).Await(ctx)
		require.NoError(t, err, "a refused actor parks and still answers")
	}
	working.Store(false)
	for _, a := range actors {
		require.NoError(t, a.Close())
	}
	assert.Equal(t, 0, budget.Stats().Held, "every token given back once the actors closed")
	assert.Equal(t, 1, budget.Stats().Peak)
}

// TestOnePNeverSpins: with GOMAXPROCS 1 the budget has no token, so a busy actor never spins
// (its senders could not run meanwhile) and parks instead.
func TestOnePNeverSpins(t *testing.T) {
	setPs(t, 1)
	var working atomic.Bool
	working.Store(true)
	a := newActor(t, WithIdle(func(bool, time.Duration) bool { return working.Load() }), WithBusySpin(time.Hour))
	budget := spin.Process()
	require.Equal(t, 0, budget.Stats().Limit)
	before := budget.Stats()
	ctx := context.Background()
	for range 10 {
		_, err := Call(ctx, a, func() (int, error) { return 0, nil }).Await(ctx)
		require.NoError(t, err)
	}
	working.Store(false)
	require.NoError(t, a.Close())
	after := budget.Stats()
	assert.Equal(t, before.Grants, after.Grants, "no token granted with one P")
	assert.Greater(t, after.Refusals, before.Refusals, "the actor asked and was refused")
	assert.Zero(t, a.Stats().Spin, "it never spun")
	assert.Positive(t, a.Stats().Parks)
}
