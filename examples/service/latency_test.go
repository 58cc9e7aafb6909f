package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The histogram puts each latency in the first bucket whose bound holds it, the rest in the
// last, and the report counts the requests over the 20 ms limit.
func TestHistogram(t *testing.T) {
	lat := []time.Duration{50 * time.Microsecond, 100 * time.Microsecond, 101 * time.Microsecond,
		3 * time.Millisecond, 20 * time.Millisecond, 21 * time.Millisecond, time.Second}
	counts := histogram(lat)
	require.Len(t, counts, len(latencyBuckets)+1)
	assert.Equal(t, 2, counts[0], "≤ 100µs")
	assert.Equal(t, 1, counts[1], "(100µs, 200µs]")
	assert.Equal(t, 1, counts[5], "(2ms, 5ms]")
	assert.Equal(t, 1, counts[7], "(10ms, 20ms]")
	assert.Equal(t, 1, counts[8], "(20ms, 50ms]")
	assert.Equal(t, 1, counts[len(latencyBuckets)], "over the last bound")
	assert.Equal(t, 5, countAtMost(lat, slowLimit))

	var b strings.Builder
	printHistogram(&b, lat)
	assert.Contains(t, b.String(), "7 requests, 2 over 20ms")
	assert.Contains(t, b.String(), "(200ms, ∞]: 1")
	assert.Contains(t, b.String(), "(200µs, 500µs]: 0 (0.000%)", "an empty bucket between the ends")

	b.Reset()
	printHistogram(&b, []time.Duration{3 * time.Millisecond, 7 * time.Millisecond})
	assert.NotContains(t, b.String(), "(0, 100µs]", "no empty bucket outside the ends")
	assert.NotContains(t, b.String(), "(10ms, 20ms]", "no empty bucket outside the ends")
	assert.Contains(t, b.String(), "(2ms, 5ms]: 1 (50.000%)")

	b.Reset()
	printHistogram(&b, nil)
	assert.Contains(t, b.String(), "0 requests, 0 over 20ms")
}

// The runtime figures of a stretch of the process: the allocation between two samples counts,
// a request's share is allocation ÷ requests, and the histograms' differences are printed.
func TestRuntimeDelta(t *testing.T) {
	a := sampleRuntime()
	sink := make([][]byte, 0, 100)
	for range 100 {
		sink = append(sink, make([]byte, 64<<10)) // large objects: counted as they are made
	}
	d := diffRuntime(a, sampleRuntime(), 100)
	assert.GreaterOrEqual(t, d.allocBytes, uint64(100*64<<10))
	assert.NotZero(t, d.gomaxprocs)
	var b strings.Builder
	d.print(&b)
	assert.Contains(t, b.String(), "bytes allocated a request")
	assert.Contains(t, b.String(), "scheduler latency")
	assert.Len(t, sink, 100)
}

// The slow tracer writes nothing for requests under its threshold or in its first window, at
// most max files, none closer together than its window, and a file per slow request otherwise; a nil tracer
// observes nothing; bad settings are refused.
func TestSlowTracer(t *testing.T) {
	dir := t.TempDir()
	tr, err := startSlowTracer(time.Millisecond, 50*time.Millisecond, 1<<20, dir, 2, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	tr.observe("early", 5*time.Millisecond) // in the first window: the load's start, not traced
	tr.observe("fast", time.Millisecond)    // not over the threshold
	tr.wg.Wait()
	assert.Empty(t, tr.written)
	time.Sleep(tr.window + 5*time.Millisecond)

	tr.observe("c0.1", 5*time.Millisecond)
	tr.wg.Wait()
	tr.observe("c0.2", 5*time.Millisecond) // within the window of the first: no file
	tr.wg.Wait()
	tr.mu.Lock()
	assert.Len(t, tr.written, 1)
	last := tr.last
	tr.mu.Unlock()
	for time.Since(last) < tr.window {
		time.Sleep(5 * time.Millisecond)
	}
	tr.observe("c0.3", 5*time.Millisecond)
	tr.wg.Wait()
	time.Sleep(tr.window + 5*time.Millisecond)
	tr.observe("c0.4", 5*time.Millisecond) // the third: over max
	files := tr.stop()
	assert.Equal(t, []string{filepath.Join(dir, "slow-1.trace"), filepath.Join(dir, "slow-2.trace")}, files)
	for _, f := range files {
		st, err := os.Stat(f)
		require.NoError(t, err)
		assert.NotZero(t, st.Size())
	}
	_, err = os.Stat(filepath.Join(dir, "slow-3.trace"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	var none *slowTracer
	none.observe("x", time.Hour)
	assert.Nil(t, none.stop())

	_, err = startSlowTracer(0, time.Second, 0, dir, 1, slog.New(slog.DiscardHandler))
	assert.ErrorContains(t, err, "-trace-slow")
	_, err = startSlowTracer(time.Millisecond, time.Second, 0, dir, 0, slog.New(slog.DiscardHandler))
	assert.ErrorContains(t, err, "-trace-max")
}
