//go:build linux

package worker_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/worker"
)

// withProcs runs the test with GOMAXPROCS at least n, so that the process's spin budget has
// tokens for the rings' readers and the caller at once.
func withProcs(t *testing.T, n int) {
	if runtime.NumCPU() < 2 {
		t.Skip("spinning needs a second CPU")
	}
	old := runtime.GOMAXPROCS(max(n, runtime.GOMAXPROCS(0)))
	t.Cleanup(func() { runtime.GOMAXPROCS(old) })
}

// A call whose reply comes within the spin window takes it without blocking: the caller
// (a device's locked actor, in the library) is never parked and woken per call.
func TestCallPollsForItsReply(t *testing.T) {
	withProcs(t, 8)
	p := start(t, worker.WithRingSpin(time.Second))
	ctx := context.Background()
	before := p.CallParks()
	for i := range 200 {
		got, err := p.Call(ctx, []byte("hello"))
		require.NoError(t, err, "call %d", i)
		require.Equal(t, "hello", string(got))
	}
	// A token may be refused now and then while the rings' readers and the test's own
	// goroutines hold the budget; most calls must have polled.
	assert.Less(t, p.CallParks()-before, uint64(20), "calls parked for replies that came within a second")
}

// Without a spin window every call blocks for its reply, and is answered all the same.
func TestCallWithoutSpinBlocks(t *testing.T) {
	p := start(t, worker.WithRingSpin(0))
	ctx := context.Background()
	before := p.CallParks()
	for range 20 {
		got, err := p.Call(ctx, []byte("hello"))
		require.NoError(t, err)
		require.Equal(t, "hello", string(got))
	}
	assert.Equal(t, uint64(20), p.CallParks()-before)
}

// A caller polling for a slow reply leaves when its context ends, within the poll's check,
// not at the end of the spin window; a reply that comes later is dropped, and the next call
// gets its own.
func TestCallSpinningHonoursContext(t *testing.T) {
	withProcs(t, 8)
	p := start(t, worker.WithRingSpin(time.Minute))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	begun := time.Now()
	_, err := p.Call(ctx, []byte("sleep:300ms"))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(begun), 250*time.Millisecond, "the call outlived its context")

	got, err := p.Call(context.Background(), []byte("hello"))
	require.NoError(t, err)
	assert.Equal(t, "hello", string(got), "the abandoned call's late reply went to the next call")
}
