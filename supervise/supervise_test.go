package supervise_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/logging/logtest"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
	"github.com/gpuactor/gpuactor/supervise"
)

// events records what the supervisor told its observers.
type events struct {
	mu       sync.Mutex
	failures []int
	restarts []int
	gaveUp   error
}

func (e *events) opts() []supervise.Option {
	return []supervise.Option{
		supervise.WithBackoff(time.Millisecond), supervise.WithCheckEvery(time.Millisecond),
		supervise.OnFailure(func(gen int, _ error) { e.mu.Lock(); e.failures = append(e.failures, gen); e.mu.Unlock() }),
		supervise.OnRestart(func(gen int) { e.mu.Lock(); e.restarts = append(e.restarts, gen); e.mu.Unlock() }),
		supervise.OnGiveUp(func(err error) { e.mu.Lock(); e.gaveUp = err; e.mu.Unlock() }),
	}
}

// A device in a process of its own comes back new after a fault: each start here opens a
// simulator of its own, as a new worker process would see a fresh GPU.
func TestRestartsAFailedDevice(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var sims []*sim.Simulator
	start := func(ctx context.Context) (*device.Device, error) {
		machine := sim.New()
		mu.Lock()
		sims = append(sims, machine)
		mu.Unlock()
		return device.Open(ctx, 0, device.WithSimulator(machine))
	}
	var ev events
	sup, err := supervise.New(ctx, start, ev.opts()...)
	require.NoError(t, err)
	first, err := sup.Current()
	require.NoError(t, err)
	require.NoError(t, first.Health(ctx))
	oldBuf, err := first.MallocBytes(ctx, 16)
	require.NoError(t, err)

	mu.Lock()
	require.NoError(t, sims[0].Fail(0, cudaerr.IllegalAddress))
	mu.Unlock()
	_, err = first.MallocBytes(ctx, 16) // the device learns of the fault at its next call
	require.ErrorIs(t, err, device.ErrDeviceFailed)
	require.Eventually(t, func() bool { return sup.Stats().Generation == 2 && sup.Stats().State == supervise.Running },
		5*time.Second, time.Millisecond)
	second, err := sup.Current()
	require.NoError(t, err)
	assert.NotSame(t, first, second)
	require.NoError(t, second.Health(ctx), "the new device works")
	// A handle of the failed generation is refused by the new one, never taken for its own.
	fresh, err := second.MallocBytes(ctx, 16)
	require.NoError(t, err)
	require.NoError(t, fresh.Close(ctx))
	_, err = first.MallocBytes(ctx, 16)
	require.ErrorIs(t, err, device.ErrClosed, "the old generation was closed by the supervisor")
	err = streams.Default(second).Memset(ctx, oldBuf, 0).Wait(ctx)
	require.ErrorIs(t, err, device.ErrWrongDevice, "its buffers belong to the old generation")
	st := sup.Stats()
	assert.Equal(t, 1, st.Restarts)
	assert.Equal(t, 1, st.Failures)
	assert.Contains(t, st.LastFailure, "IllegalAddress")
	ev.mu.Lock()
	assert.Equal(t, []int{1}, ev.failures)
	assert.Equal(t, []int{2}, ev.restarts)
	ev.mu.Unlock()

	require.NoError(t, sup.Close())
	require.NoError(t, sup.Close(), "twice")
	_, err = sup.Current()
	require.ErrorIs(t, err, supervise.ErrClosed)
	_, err = second.MallocBytes(ctx, 16)
	require.ErrorIs(t, err, device.ErrClosed, "Close closed the child")
}

// Inside one process a faulted GPU cannot come back: reopening it gives a device that is
// failed already, so the supervisor spends its restarts and gives up, cleanly.
func TestGivesUpOnAGPUThatCannotComeBack(t *testing.T) {
	ctx := context.Background()
	machine := sim.New()
	start := func(ctx context.Context) (*device.Device, error) {
		return device.Open(ctx, 0, device.WithSimulator(machine))
	}
	var ev events
	sup, err := supervise.New(ctx, start, append(ev.opts(), supervise.WithRestarts(2, time.Minute))...)
	require.NoError(t, err)
	dev, err := sup.Current()
	require.NoError(t, err)
	require.NoError(t, machine.Fail(0, cudaerr.LaunchFailure))
	_, _ = dev.MallocBytes(ctx, 16)
	select {
	case <-sup.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the supervisor did not give up")
	}
	_, err = sup.Current()
	require.ErrorIs(t, err, supervise.ErrGaveUp)
	require.ErrorIs(t, err, device.ErrDeviceFailed, "with the last failure")
	st := sup.Stats()
	assert.Equal(t, supervise.GaveUp, st.State)
	assert.Zero(t, st.Restarts, "no start succeeded: opening the failed GPU fails")
	assert.Equal(t, 3, st.Failures, "the device's, then each of the two starts allowed")
	ev.mu.Lock()
	assert.Equal(t, []int{1, 1, 1}, ev.failures)
	assert.Empty(t, ev.restarts)
	require.ErrorIs(t, ev.gaveUp, device.ErrDeviceFailed)
	ev.mu.Unlock()
	require.NoError(t, sup.Close())
}

// A device that stops answering fails its health check, and is replaced.
func TestHealthCheckFailureRestarts(t *testing.T) {
	ctx := context.Background()
	n := 0
	start := func(ctx context.Context) (*device.Device, error) {
		n++
		var opts []sim.Option
		if n == 1 { // the first device answers nothing in time
			opts = append(opts, sim.WithFaults(0, sim.FaultPlan{SlowRate: 1, SlowBy: 200 * time.Millisecond}))
		}
		return device.Open(ctx, 0, device.WithSimulator(sim.New(opts...)))
	}
	var ev events
	sup, err := supervise.New(ctx, start, append(ev.opts(), supervise.WithHealthCheck(time.Millisecond, 20*time.Millisecond))...)
	require.NoError(t, err)
	defer sup.Close()
	require.Eventually(t, func() bool { return sup.Stats().Generation == 2 }, 5*time.Second, time.Millisecond)
	assert.Contains(t, sup.Stats().LastFailure, "health")
}

func TestNewFailsWhenTheFirstStartFails(t *testing.T) {
	boom := errors.New("boom")
	_, err := supervise.New(context.Background(), func(context.Context) (*device.Device, error) { return nil, boom })
	require.ErrorIs(t, err, boom)
	_, err = supervise.New[*device.Device](context.Background(), nil)
	require.Error(t, err)
}

// fakeChild fails when told to.
type fakeChild struct{ err atomic.Pointer[error] }

func (c *fakeChild) Err() error {
	if p := c.err.Load(); p != nil {
		return *p
	}
	return nil
}
func (c *fakeChild) Close() error { return nil }

// The supervisor logs a failure, the restart and giving up to the slog logger it is given,
// with the generation and the failure.
func TestLogsFailuresRestartsAndGivingUp(t *testing.T) {
	rec, log := logtest.New()
	var children []*fakeChild
	var mu sync.Mutex
	start := func(context.Context) (*fakeChild, error) {
		c := &fakeChild{}
		mu.Lock()
		children = append(children, c)
		mu.Unlock()
		return c, nil
	}
	var ev events
	sup, err := supervise.New(t.Context(), start, append(ev.opts(), supervise.WithRestarts(1, time.Hour), supervise.WithLogger(log))...)
	require.NoError(t, err)
	defer sup.Close()
	boom := errors.New("boom")
	fail := func(i int) {
		mu.Lock()
		defer mu.Unlock()
		children[i].err.Store(&boom)
	}

	fail(0)
	require.Eventually(t, func() bool { return sup.Stats().Generation == 2 }, 5*time.Second, time.Millisecond)
	failed, ok := rec.Find("supervise: child failed")
	require.True(t, ok, "logged: %v", rec.Messages())
	assert.Equal(t, slog.LevelError, failed.Level)
	assert.Equal(t, int64(1), failed.Attrs["generation"].Int64())
	assert.Equal(t, boom, failed.Attrs["error"].Any())
	// The restart is logged just after the new generation shows in Stats.
	require.Eventually(t, func() bool { _, ok := rec.Find("supervise: restarted"); return ok }, 5*time.Second, time.Millisecond)
	restarted, _ := rec.Find("supervise: restarted")
	assert.Equal(t, slog.LevelInfo, restarted.Level)
	assert.Equal(t, int64(2), restarted.Attrs["generation"].Int64())

	fail(1)
	<-sup.Done()
	gaveUp, ok := rec.Find("supervise: giving up")
	require.True(t, ok, "logged: %v", rec.Messages())
	assert.Equal(t, slog.LevelError, gaveUp.Level)
	assert.Equal(t, boom, gaveUp.Attrs["error"].Any())
}
