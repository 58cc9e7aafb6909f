package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/sim"
)

// trackerOn returns a tracker over a simulated device and a stream of that device.
func trackerOn(t *testing.T) (*Tracker, backend.Device, backend.Stream) {
	t.Helper()
	dev, err := sim.New().Open(0)
	require.NoError(t, err)
	s, err := dev.StreamCreate(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	tr := newTracker(dev, func(err error, _ string) error { return err }, nil)
	t.Cleanup(func() { _ = tr.close() })
	return tr, dev, s
}

// testEpoch is the clock the tests poll trackers with, as a device's actor does with its own.
var testEpoch = time.Now()

// tick polls tr as the actor's idle hook would, now.
func tick(tr *Tracker, hurry bool) bool { return tr.poll(hurry, time.Since(testEpoch)) }

// pollUntil polls tr (not in a hurry) until cond holds, or fails after a while.
func pollUntil(t *testing.T, tr *Tracker, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "condition not reached")
		tick(tr, false)
	}
}

func TestTrackerCompletesInOrderOnlyAfterTheGPU(t *testing.T) {
	for _, hurry := range []bool{false, true} {
		tr, dev, s := trackerOn(t)
		gate := make(chan struct{})
		require.NoError(t, dev.LaunchHostFunc(s, func() { <-gate }))
		var order []int
		for i := range 100 {
			tr.After(s, func(err error) {
				assert.NoError(t, err)
				order = append(order, i)
			})
			tick(tr, hurry)
		}
		for range 50 {
			tick(tr, hurry)
		}
		assert.Empty(t, order, "nothing completes while the stream is held (hurry %v)", hurry)
		close(gate)
		pollUntil(t, tr, func() bool { return len(order) == 100 })
		for i, v := range order {
			require.Equal(t, i, v, "callbacks run in registration order")
		}
		assert.False(t, tick(tr, false), "nothing pending")
		assert.Empty(t, tr.active, "an idle stream is not polled")
		require.NoError(t, tr.Settle(s, nil))
		assert.Empty(t, tr.streams, "a settled stream is forgotten")
		assert.NoError(t, tr.close())
	}
}

func TestTrackerPacesWatermarksWhenBusy(t *testing.T) {
	tr, dev, s := trackerOn(t)
	gate := make(chan struct{})
	require.NoError(t, dev.LaunchHostFunc(s, func() { <-gate }))
	defer close(gate)
	// The tracker's clock is the actor's: here one that advances 10 µs an operation, so that
	// the bound does not depend on how fast the machine runs the loop.
	var now time.Duration
	for range 1000 {
		tr.After(s, func(error) {})
		now += 10 * time.Microsecond
		tr.poll(true, now)
	}
	// While messages wait, a watermark per markOps operations or per markGap, plus the first.
	limit := int(now/markGap) + 1000/markOps + 1
	assert.LessOrEqual(t, int(tr.counts.marks.load()), limit)
	assert.Less(t, int(tr.counts.marks.load()), 1000/4, "operations share watermarks")
	assert.LessOrEqual(t, int(tr.counts.marks.load()), maxMarks, "a held stream has at most maxMarks in flight")
	assert.Positive(t, tr.counts.marks.load())
}

func TestTrackerMarksUrgentOperationsAtOnce(t *testing.T) {
	tr, dev, s := trackerOn(t)
	tr.markGap = time.Hour
	gate := make(chan struct{})
	require.NoError(t, dev.LaunchHostFunc(s, func() { <-gate }))
	defer close(gate)
	tr.After(s, func(error) {})
	tick(tr, true)
	require.Equal(t, uint64(1), tr.counts.marks.load())
	tr.After(s, func(error) {})
	tick(tr, true)
	require.Equal(t, uint64(1), tr.counts.marks.load(), "in a hurry, a busy stream's next watermark waits")
	tr.AfterMarked(s, func(error) {})
	tick(tr, true)
	assert.Equal(t, uint64(2), tr.counts.marks.load(), "AfterMarked gets a watermark at once, even in a hurry")
}

func TestTrackerRecordsAtOnceWhenIdle(t *testing.T) {
	tr, _, s := trackerOn(t)
	for i := range 20 {
		done := false
		tr.After(s, func(error) { done = true })
		pollUntil(t, tr, func() bool { return done })
		require.Equal(t, uint64(i+1), tr.counts.marks.load(), "a lone operation gets its own watermark")
	}
}

// A stream that goes idle and gets work again keeps its track: no allocation per burst of
// work, and the watermark queue is reused rather than regrown.
func TestTrackerReusesIdleTracks(t *testing.T) {
	tr, _, s := trackerOn(t)
	done := 0
	tr.After(s, func(error) { done++ })
	pollUntil(t, tr, func() bool { return done == 1 })
	first := tr.streams[s]
	require.NotNil(t, first)
	require.Empty(t, tr.active)
	marks := cap(first.marks)
	for i := range 100 {
		tr.After(s, func(error) { done++ })
		pollUntil(t, tr, func() bool { return done == i+2 })
		require.Empty(t, tr.active)
	}
	assert.Same(t, first, tr.streams[s], "the idle stream's track is reused")
	assert.Equal(t, marks, cap(first.marks), "its watermark queue is reused")
}

func TestTrackerLimitsWatermarksInFlight(t *testing.T) {
	tr, dev, s := trackerOn(t)
	gate := make(chan struct{})
	require.NoError(t, dev.LaunchHostFunc(s, func() { <-gate }))
	defer close(gate)
	for range 3 * maxMarks {
		tr.AfterMarked(s, func(error) {})
		tick(tr, false)
	}
	assert.Len(t, tr.streams[s].marks[tr.streams[s].first:], maxMarks)
	assert.Len(t, tr.streams[s].open, 2*maxMarks, "the rest waits for a watermark")
}
