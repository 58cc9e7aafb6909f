package actor

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/spin"
)

// probing is a ProbedCompleter: after ready probes it completes its promise, or says stop.
type probing struct {
	p         *Promise[int]
	ready     int64
	stop      bool
	probes    atomic.Int64
	completed atomic.Int64
}

func (c *probing) Completed(int, error) { c.completed.Add(1) }

func (c *probing) Probe() ProbeResult {
	n := c.probes.Add(1)
	if n < c.ready {
		return ProbeAsked
	}
	if c.stop {
		return ProbeStop
	}
	c.p.Complete(42, nil)
	return ProbeAsked
}

// withPs runs the test with at least n Ps, and the spin budget sized to them.
func withPs(t *testing.T, n int) { setPs(t, max(runtime.GOMAXPROCS(0), n)) }

// setPs runs the test with exactly n Ps, and the spin budget sized to them.
func setPs(t *testing.T, n int) {
	prev := runtime.GOMAXPROCS(n)
	spin.Refresh()
	t.Cleanup(func() { runtime.GOMAXPROCS(prev); spin.Refresh() })
}

// A prober that finds the result completes the future for its waiter, once.
func TestProberCompletesTheFuture(t *testing.T) {
	withPs(t, 4)
	p := NewPromise[int]()
	c := &probing{p: p, ready: 10}
	p.OnCompleteProbed(c)
	p.Future().SetAwaitSpin(time.Minute)
	v, err := p.Future().Await(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 42, v)
	assert.Equal(t, int64(10), c.probes.Load(), "probed until it found the result, not after")
	assert.Equal(t, int64(1), c.completed.Load(), "the completer ran once")
	assert.False(t, p.Complete(7, errors.New("late")), "the producer's later completion loses")
	v, err = p.Future().Await(context.Background())
	assert.Equal(t, 42, v)
	assert.NoError(t, err)
}

// ProbeStop stops the probes: the waiter waits for the producer.
func TestProberStop(t *testing.T) {
	withPs(t, 4)
	p := NewPromise[int]()
	c := &probing{p: p, ready: 3, stop: true}
	p.OnCompleteProbed(c)
	p.Future().SetAwaitSpin(time.Minute)
	done := make(chan error, 1)
	go func() { _, err := p.Future().Await(context.Background()); done <- err }()
	for c.probes.Load() < 3 {
		runtime.Gosched()
	}
	mine := errors.New("the producer's error")
	require.True(t, p.Complete(0, mine))
	require.ErrorIs(t, <-done, mine)
	assert.Equal(t, int64(3), c.probes.Load(), "no probe after ProbeStop")
}

// A waiter whose context ends while it probes returns at once with the context's error.
func TestProberCancelled(t *testing.T) {
	withPs(t, 4)
	p := NewPromise[int]()
	c := &probing{p: p, ready: 1 << 62}
	p.OnCompleteProbed(c)
	p.Future().SetAwaitSpin(time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := p.Future().Await(ctx); done <- err }()
	for c.probes.Load() < 5 {
		runtime.Gosched()
	}
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
}
