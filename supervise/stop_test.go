package supervise_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/supervise"
)

// closingChild counts its closes, and fails Close with closeErr.
type closingChild struct {
	fakeChild
	closes   atomic.Int32
	closeErr error
}

func (c *closingChild) Close() error { c.closes.Add(1); return c.closeErr }

// When the supervisor's context ends, it closes its child, as Close would, and Current says
// it is closed, with the context's cause, rather than handing out the closed child.
func TestContextEndClosesTheChild(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	stopped := errors.New("service stopping")
	child := &closingChild{closeErr: errors.New("close failed")}
	sup, err := supervise.New(ctx, func(context.Context) (*closingChild, error) { return child, nil },
		supervise.WithCheckEvery(time.Millisecond))
	require.NoError(t, err)
	cur, err := sup.Current()
	require.NoError(t, err)
	require.Same(t, child, cur)

	cancel(stopped)
	select {
	case <-sup.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the supervisor did not stop with its context")
	}
	assert.Equal(t, int32(1), child.closes.Load(), "the child was closed once")
	cur, err = sup.Current()
	assert.Nil(t, cur)
	require.ErrorIs(t, err, supervise.ErrClosed)
	require.ErrorIs(t, err, stopped, "with why the context ended")
	assert.Equal(t, supervise.Closed, sup.Stats().State)

	require.ErrorIs(t, sup.Close(), child.closeErr, "Close reports the child's Close error")
	require.ErrorIs(t, sup.Close(), child.closeErr, "the same, twice")
	assert.Equal(t, int32(1), child.closes.Load(), "Close did not close it again")
}

// A device under a supervisor whose context ends is closed: its buffers are freed and it
// refuses work with ErrClosed.
func TestContextEndClosesTheDevice(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	sup, err := supervise.New(ctx, func(ctx context.Context) (*device.Device, error) {
		return device.Open(ctx, 0, device.WithSimulator(sim.New()))
	}, supervise.WithCheckEvery(time.Millisecond))
	require.NoError(t, err)
	dev, err := sup.Current()
	require.NoError(t, err)
	_, err = dev.MallocBytes(context.Background(), 16)
	require.NoError(t, err)
	cancel()
	<-sup.Done()
	_, err = dev.MallocBytes(context.Background(), 16)
	require.ErrorIs(t, err, device.ErrClosed)
	assert.Equal(t, device.Usage{}, dev.Stats().Memory, "its memory was freed")
	_, err = sup.Current()
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, sup.Close())
}

// A context that ends while a restart waits out its backoff stops the supervisor with the
// failed child closed once and no new one started.
func TestContextEndDuringARestart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var starts atomic.Int32
	first := &closingChild{}
	sup, err := supervise.New(ctx, func(context.Context) (*closingChild, error) {
		if starts.Add(1) == 1 {
			return first, nil
		}
		return &closingChild{}, nil
	}, supervise.WithCheckEvery(time.Millisecond), supervise.WithBackoff(time.Hour))
	require.NoError(t, err)
	boom := errors.New("boom")
	first.err.Store(&boom)
	require.Eventually(t, func() bool { return sup.Stats().State == supervise.Restarting }, 5*time.Second, time.Millisecond)
	cancel()
	<-sup.Done()
	assert.Equal(t, int32(1), starts.Load(), "no restart after the context ended")
	assert.Equal(t, int32(1), first.closes.Load(), "the failed child was closed once")
	_, err = sup.Current()
	require.ErrorIs(t, err, supervise.ErrClosed)
	require.NoError(t, sup.Close())
}

// WithHealthCheck needs a positive period and timeout: a zero timeout would fail every check
// of a healthy child and restart it until the supervisor gave up. New refuses it before it
// starts anything.
func TestWithHealthCheckRefusesNonPositiveDurations(t *testing.T) {
	for _, tc := range []struct {
		name           string
		every, timeout time.Duration
	}{
		{"zero timeout", time.Second, 0},
		{"negative timeout", time.Second, -time.Second},
		{"zero period", 0, time.Second},
		{"negative period", -time.Millisecond, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var starts atomic.Int32
			sup, err := supervise.New(context.Background(), func(context.Context) (*fakeChild, error) {
				starts.Add(1)
				return &fakeChild{}, nil
			}, supervise.WithHealthCheck(tc.every, tc.timeout))
			require.ErrorIs(t, err, supervise.ErrBadOption)
			assert.Contains(t, err.Error(), "WithHealthCheck")
			assert.Nil(t, sup)
			assert.Zero(t, starts.Load(), "nothing was started")
		})
	}
}

// WithRestarts needs a positive window when it allows restarts: a zero one would count none.
func TestWithRestartsRefusesANonPositiveWindow(t *testing.T) {
	start := func(context.Context) (*fakeChild, error) { return &fakeChild{}, nil }
	_, err := supervise.New(context.Background(), start, supervise.WithRestarts(3, 0))
	require.ErrorIs(t, err, supervise.ErrBadOption)
	assert.Contains(t, err.Error(), "WithRestarts")
	sup, err := supervise.New(context.Background(), start, supervise.WithRestarts(0, 0))
	require.NoError(t, err, "no restarts need no window")
	require.NoError(t, sup.Close())
}
