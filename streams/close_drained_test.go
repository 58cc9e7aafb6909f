package streams_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// TestCloseOfADrainedStreamTakesNoWatermark: a stream whose work has completed is destroyed as
// Close's message runs, with no watermark to wait for.
func TestCloseOfADrainedStreamTakesNoWatermark(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s, err := streams.New(f.Ctx, f.Dev)
		require.NoError(t, err)
		require.NoError(t, s.Launch(f.Ctx, f.spin, one(), spinCycles(10)).Wait(f.Ctx))
		marks := f.Dev.Stats().Tracker.Watermarks
		require.NoError(t, s.Close(f.Ctx))
		assert.Equal(t, marks, f.Dev.Stats().Tracker.Watermarks)
		assert.ErrorIs(t, s.Close(f.Ctx), device.ErrClosed)
		assert.ErrorIs(t, s.Launch(f.Ctx, f.spin, one(), int64(1)).Wait(f.Ctx), device.ErrClosed)
	})
}

// TestCloseOfABusyStreamWaitsForItsWork: Close of a stream whose work is held open returns
// only once that work has completed, its futures done.
func TestCloseOfABusyStreamWaitsForItsWork(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s, err := streams.New(f.Ctx, f.Dev)
		require.NoError(t, err)
		gate := make(chan struct{})
		held := s.HostFunc(f.Ctx, func() { <-gate })
		closed := make(chan error, 1)
		go func() { closed <- s.Close(f.Ctx) }()
		// Close's message has run once the stream refuses work.
		require.Eventually(t, func() bool {
			_, err := s.Query(f.Ctx)
			return err != nil
		}, 10*time.Second, time.Millisecond)
		select {
		case err := <-closed:
			t.Fatalf("Close returned (%v) while the stream's work was held", err)
		case <-time.After(20 * time.Millisecond):
		}
		assert.False(t, held.Ready())
		close(gate)
		require.NoError(t, <-closed)
		assert.True(t, held.Ready())
		assert.NoError(t, held.Err())
		testdev.RequireUsable(t, f.Dev)
	})
}
