package spin

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOneP(t *testing.T) {
	b := New(1)
	assert.False(t, b.Acquire(), "with one P nobody spins: the spinner would hold the only P")
	assert.Equal(t, Stats{Limit: 0, Refusals: 1}, b.Stats())
}

func TestTwoPs(t *testing.T) {
	b := New(2)
	require.True(t, b.Acquire())
	assert.False(t, b.Acquire(), "the second P is the one left to spare")
	b.Release()
	require.True(t, b.Acquire(), "a token given back is granted again")
	b.Release()
	assert.Equal(t, Stats{Limit: 1, Held: 0, Peak: 1, Grants: 2, Refusals: 1}, b.Stats())
}

func TestZeroBudgetRefuses(t *testing.T) {
	var b Budget
	assert.False(t, b.Acquire())
	b.Resize(0)
	assert.False(t, b.Acquire(), "no Ps at all is treated as one")
	assert.Equal(t, uint64(2), b.Stats().Refusals)
}

func TestResize(t *testing.T) {
	b := New(4)
	for range 3 {
		require.True(t, b.Acquire())
	}
	b.Resize(2)
	assert.False(t, b.Acquire(), "no token beyond a lowered limit")
	assert.Equal(t, 3, b.Stats().Held, "tokens already held stay held")
	for range 3 {
		b.Release()
	}
	require.True(t, b.Acquire())
	assert.False(t, b.Acquire())
	b.Release()
	b.ResetPeak()
	assert.Equal(t, 0, b.Stats().Peak)
}

func TestReleaseWithoutAcquirePanics(t *testing.T) {
	b := New(4)
	assert.PanicsWithValue(t, "spin: Release without Acquire", b.Release)
}

// TestConcurrentNeverExceedsLimit: goroutines far more than the limit take and give back
// tokens at once; the holders, counted by the test itself, never exceed the limit, every
// token is given back, and the counters add up.
func TestConcurrentNeverExceedsLimit(t *testing.T) {
	const procs, workers, rounds = 4, 16, 2000
	b := New(procs)
	var holding, most atomic.Int32
	var granted atomic.Uint64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range rounds {
				if !b.Acquire() {
					runtime.Gosched()
					continue
				}
				granted.Add(1)
				n := holding.Add(1)
				for {
					m := most.Load()
					if n <= m || most.CompareAndSwap(m, n) {
						break
					}
				}
				runtime.Gosched()
				holding.Add(-1)
				b.Release()
			}
		})
	}
	wg.Wait()
	st := b.Stats()
	assert.LessOrEqual(t, most.Load(), int32(procs-1), "holders at once")
	assert.LessOrEqual(t, st.Peak, procs-1, "the budget's own peak")
	assert.Equal(t, 0, st.Held, "every token given back")
	assert.Equal(t, granted.Load(), st.Grants)
	assert.Equal(t, uint64(workers*rounds), st.Grants+st.Refusals, "every ask granted or refused")
	assert.Positive(t, st.Refusals, "16 workers against 3 tokens")
}

func TestProcessFollowsGOMAXPROCS(t *testing.T) {
	was := runtime.GOMAXPROCS(3)
	defer func() {
		runtime.GOMAXPROCS(was)
		Refresh()
	}()
	Refresh()
	assert.Equal(t, 2, Process().Stats().Limit)
	runtime.GOMAXPROCS(1)
	Refresh()
	assert.Equal(t, 0, Process().Stats().Limit)
	assert.False(t, Acquire())
}
