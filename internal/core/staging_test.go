package core

import (
	"context"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/sim"
)

func openStaging(t *testing.T, limit uint64) *Staging {
	t.Helper()
	d, err := Open(context.Background(), sim.New(), Config{StagingLimit: limit}, 0)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	return d.Staging()
}

// A hundred small copies at once pin two slots, not a hundred.
func TestSmallSlotsShareASlot(t *testing.T) {
	ctx := context.Background()
	st := openStaging(t, 0)
	var held []unsafe.Pointer
	seen := map[unsafe.Pointer]bool{}
	for range 100 {
		p, err := st.AcquireSmall(ctx)
		require.NoError(t, err)
		require.False(t, seen[p], "lent twice")
		seen[p] = true
		held = append(held, p)
	}
	s := st.Stats()
	assert.Equal(t, uint64(2*StagingSlotSize), s.PinnedBytes)
	assert.Equal(t, uint64(100*StagingSmallSize), s.InUseBytes)
	st.Release(held...)
	s = st.Stats()
	assert.Zero(t, s.InUseBytes)
	assert.Equal(t, uint64(2*StagingSlotSize), s.PinnedBytes, "kept for the next copies")

	big, err := st.Acquire(ctx, 1)
	require.NoError(t, err)
	assert.False(t, seen[big[0]], "a whole slot is never one that was carved")
	st.Release(big...)
}

// At the limit, a small copy waits for a whole slot to come back (and carves it), or for a
// small slot; and gives up with its context.
func TestSmallSlotsWaitAtTheLimit(t *testing.T) {
	ctx := context.Background()
	st := openStaging(t, StagingSlotSize)
	big, err := st.Acquire(ctx, 1)
	require.NoError(t, err)

	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err = st.AcquireSmall(cctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Zero(t, st.Stats().Waiting)

	got := make(chan unsafe.Pointer)
	go func() {
		p, err := st.AcquireSmall(ctx)
		assert.NoError(t, err)
		got <- p
	}()
	require.Eventually(t, func() bool { return st.Stats().Waiting == 1 }, time.Minute, time.Millisecond)
	st.Release(big...)
	first := <-got

	// Every small slot of the one slot lent: the next waits for one of them.
	var rest []unsafe.Pointer
	for range smallPerSlot - 1 {
		p, err := st.AcquireSmall(ctx)
		require.NoError(t, err)
		rest = append(rest, p)
	}
	go func() {
		p, err := st.AcquireSmall(ctx)
		assert.NoError(t, err)
		got <- p
	}()
	require.Eventually(t, func() bool { return st.Stats().Waiting == 1 }, time.Minute, time.Millisecond)
	st.Release(first)
	assert.Equal(t, first, <-got)
	st.Release(append(rest, first)...)
	assert.Zero(t, st.Stats().InUseBytes)
}

// Small and whole-slot copies from many goroutines under a tight limit: nobody deadlocks, no
// memory is lent twice at once, and everything comes back.
func TestSmallAndWholeSlotsTogether(t *testing.T) {
	ctx := context.Background()
	st := openStaging(t, 3*StagingSlotSize)
	var mu sync.Mutex
	inUse := map[unsafe.Pointer]bool{}
	take := func(ps ...unsafe.Pointer) {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range ps {
			require.False(t, inUse[p], "lent twice at once")
			inUse[p] = true
		}
	}
	give := func(ps ...unsafe.Pointer) {
		mu.Lock()
		for _, p := range ps {
			delete(inUse, p)
		}
		mu.Unlock()
		st.Release(ps...)
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 200 {
				if (g+i)%4 == 0 {
					ps, err := st.Acquire(ctx, 2)
					if !assert.NoError(t, err) {
						return
					}
					take(ps...)
					give(ps...)
					continue
				}
				p, err := st.AcquireSmall(ctx)
				if !assert.NoError(t, err) {
					return
				}
				take(p)
				give(p)
			}
		})
	}
	wg.Wait()
	s := st.Stats()
	assert.Zero(t, s.InUseBytes)
	assert.Zero(t, s.Waiting)
	assert.LessOrEqual(t, s.PinnedBytes, uint64(3*StagingSlotSize))
}

// Slots carved for small copies become whole again for a copy that needs a whole slot: at
// once when their small slots are idle, or as the last of them comes back.
func TestCarvedSlotsBecomeWholeAgain(t *testing.T) {
	ctx := context.Background()
	st := openStaging(t, StagingSlotSize)
	p, err := st.AcquireSmall(ctx)
	require.NoError(t, err)
	st.Release(p)
	big, err := st.Acquire(ctx, 1) // the only slot is carved, and idle: made whole
	require.NoError(t, err)
	st.Release(big...)

	p, err = st.AcquireSmall(ctx)
	require.NoError(t, err)
	got := make(chan []unsafe.Pointer)
	go func() {
		ps, err := st.Acquire(ctx, 1)
		assert.NoError(t, err)
		got <- ps
	}()
	require.Eventually(t, func() bool { return st.Stats().Waiting == 1 }, time.Minute, time.Millisecond)
	st.Release(p) // the carved slot's last small slot back: whole again, to the waiter
	big = <-got
	assert.Equal(t, uint64(StagingSlotSize), st.Stats().InUseBytes)
	st.Release(big...)
	assert.Zero(t, st.Stats().InUseBytes)
}

// Many small copies arriving at once pin one slot between them, not one each.
func TestSmallCopiesArrivingTogetherPinOneSlot(t *testing.T) {
	ctx := context.Background()
	st := openStaging(t, 0)
	start := make(chan struct{})
	got := make(chan unsafe.Pointer, 64)
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			<-start
			p, err := st.AcquireSmall(ctx)
			assert.NoError(t, err)
			got <- p
		})
	}
	close(start)
	wg.Wait()
	close(got)
	var held []unsafe.Pointer
	for p := range got {
		held = append(held, p)
	}
	assert.Equal(t, uint64(StagingSlotSize), st.Stats().PinnedBytes)
	st.Release(held...)
}
