//go:build linux

package worker_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/testleak"
	"github.com/gpuactor/gpuactor/internal/testproc"
	"github.com/gpuactor/gpuactor/internal/worker"
)

// pendingCalls makes n calls that wait in the worker, and returns their errors' channel and
// a wait for the handler to have taken the first.
func pendingCalls(t *testing.T, p *worker.Process, n int, req string) <-chan error {
	t.Helper()
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := p.Call(context.Background(), []byte(req))
			errs <- err
		}()
	}
	// The calls are in flight once the worker has been sent them: a call after them that
	// is queued behind proves nothing, so give the senders a moment.
	time.Sleep(50 * time.Millisecond)
	return errs
}

// collect waits for n errors, failing the test if they take longer than within.
func collect(t *testing.T, errs <-chan error, n int, within time.Duration) []error {
	t.Helper()
	deadline := time.After(within)
	var out []error
	for range n {
		select {
		case err := <-errs:
			out = append(out, err)
		case <-deadline:
			t.Fatalf("only %d of %d pending calls returned within %v", len(out), n, within)
		}
	}
	return out
}

// kill -9 mid-call: every pending call fails at once with ErrWorkerDied, naming the pid and
// the signal.
func TestKilledMidCall(t *testing.T) {
	eachTransport(t, func(t *testing.T, start startFunc) {
		p := start(t)
		errs := pendingCalls(t, p, 32, "sleep:1m")
		killed := time.Now()
		require.NoError(t, syscall.Kill(p.Pid(), syscall.SIGKILL))
		for _, err := range collect(t, errs, 32, time.Second) {
			require.ErrorIs(t, err, worker.ErrWorkerDied)
			assert.NotErrorIs(t, err, worker.ErrWorkerHung)
			assert.Contains(t, err.Error(), strconv.Itoa(p.Pid()))
			assert.Contains(t, err.Error(), "signal: killed")
		}
		t.Logf("32 pending calls failed %v after the kill", time.Since(killed))
		select {
		case <-p.Done():
		case <-time.After(time.Second):
			t.Fatal("Done did not close")
		}
		require.ErrorIs(t, p.Err(), worker.ErrWorkerDied)
		d, ok := errors.AsType[*worker.DiedError](p.Err())
		require.True(t, ok)
		assert.Equal(t, p.Pid(), d.Pid)
		_, err := p.Call(context.Background(), []byte("after"))
		require.ErrorIs(t, err, worker.ErrWorkerDied, "calls after the death fail too")
		require.NoError(t, p.Close(), "closing a dead worker")
	})
}

// A worker that exits mid-call: its status and last words reach the callers.
func TestWorkerExitsMidCall(t *testing.T) {
	p := start(t)
	_, err := p.Call(context.Background(), []byte("crash-in:100ms"))
	require.NoError(t, err)
	errs := pendingCalls(t, p, 4, "sleep:1m")
	for _, err := range collect(t, errs, 4, time.Second) {
		require.ErrorIs(t, err, worker.ErrWorkerDied)
		assert.Contains(t, err.Error(), "exit status 7")
		assert.Contains(t, err.Error(), "crashing, as asked", "with the tail of its stderr")
	}
}

// A frozen worker (SIGSTOP: it reads nothing, answers nothing) is found by the heartbeat,
// killed, and its calls fail with ErrWorkerHung.
func TestHungWorker(t *testing.T) {
	eachTransport(t, func(t *testing.T, start startFunc) {
		hungAfter := 200 * time.Millisecond
		p := start(t, worker.WithHeartbeat(20*time.Millisecond, hungAfter))
		_, err := p.Call(context.Background(), []byte("sleep:400ms"))
		require.NoError(t, err, "a long call is not a hang: the worker answers heartbeats meanwhile")

		errs := pendingCalls(t, p, 8, "sleep:1m")
		stopped := time.Now()
		require.NoError(t, syscall.Kill(p.Pid(), syscall.SIGSTOP))
		for _, err := range collect(t, errs, 8, hungAfter+2*time.Second) {
			require.ErrorIs(t, err, worker.ErrWorkerHung)
			require.ErrorIs(t, err, worker.ErrWorkerDied, "a hung worker is killed: it died")
			assert.Contains(t, err.Error(), "hung")
			assert.Contains(t, err.Error(), strconv.Itoa(p.Pid()))
		}
		t.Logf("hang found and calls failed %v after SIGSTOP", time.Since(stopped))
		<-p.Done()
		require.ErrorIs(t, p.Err(), worker.ErrWorkerHung)
	})
}

// Close asks; a worker stuck in a call deaf to its context is killed after the close
// timeout, and the call fails with ErrClosed.
func TestCloseKillsAStuckWorker(t *testing.T) {
	p := start(t, worker.WithCloseTimeout(300*time.Millisecond))
	errs := pendingCalls(t, p, 1, "block")
	began := time.Now()
	err := p.Close()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "killed")
	assert.Less(t, time.Since(began), 2*time.Second)
	require.ErrorIs(t, collect(t, errs, 1, time.Second)[0], worker.ErrClosed)
	require.Equal(t, err, p.Close(), "idempotent")
}

// Close while calls are pending: a worker that honours its context exits cleanly and the
// calls fail with ErrClosed.
func TestClosePendingCalls(t *testing.T) {
	eachTransport(t, func(t *testing.T, start startFunc) {
		p := start(t)
		errs := pendingCalls(t, p, 8, "sleep:1m")
		require.NoError(t, p.Close())
		closed := 0
		for _, err := range collect(t, errs, 8, time.Second) {
			require.Error(t, err)
			if errors.Is(err, worker.ErrClosed) {
				closed++
			}
		}
		// The call being served may be answered with its handler's error (context canceled)
		// before the worker exits; the queued ones never ran.
		assert.GreaterOrEqual(t, closed, 7)
	})
}

// A worker never outlives its parent: kill -9 a worker that started a worker of its own, and
// the grandchild dies too (Pdeathsig), though nobody closed it.
func TestWorkerDiesWithItsParent(t *testing.T) {
	mid := start(t, worker.WithEnv(modeVar+"=parent"))
	got, err := mid.Call(context.Background(), []byte("spawn"))
	require.NoError(t, err)
	grandchild, err := strconv.Atoi(string(got))
	require.NoError(t, err)
	require.NotContains(t, []byte{0, 'Z'}, testproc.State(grandchild), "the grandchild runs")

	killed := time.Now()
	require.NoError(t, syscall.Kill(mid.Pid(), syscall.SIGKILL))
	<-mid.Done()
	t.Logf("mid reaped %v after the kill", time.Since(killed))
	defer func() { t.Logf("grandchild gone %v after the kill", time.Since(killed)) }()
	// Dead is gone, or a zombie waiting for init (whichever adopted it) to reap it.
	require.Eventually(t, func() bool { st := testproc.State(grandchild); return st == 0 || st == 'Z' },
		time.Second, time.Millisecond, "the grandchild %d outlived its parent", grandchild)
}

// Start, call, kill and close many workers: no descriptors, goroutines or processes stay.
func TestNoLeaks(t *testing.T) {
	ctx := context.Background()
	fds, goroutines := testproc.OpenFDs(), testleak.Base()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			p, err := worker.Start(ctx, worker.WithHeartbeat(10*time.Millisecond, time.Second))
			if !assert.NoError(t, err) {
				return
			}
			_, err = p.Call(ctx, fmt.Appendf(nil, "call %d", i))
			assert.NoError(t, err)
			if i%2 == 0 {
				_ = syscall.Kill(p.Pid(), syscall.SIGKILL)
				<-p.Done()
			}
			assert.NoError(t, p.Close())
		})
	}
	wg.Wait()
	assert.Empty(t, testproc.Children())
	assert.Eventually(t, func() bool { return testproc.OpenFDs() <= fds }, 2*time.Second, 10*time.Millisecond,
		"descriptors: %d before, %d after", fds, testproc.OpenFDs())
	testleak.Settle(t, goroutines)
}

// A worker killed just before Close died, and Err says so once Close returns, every time: the
// kill's end is not taken for the exit Close asked for. A worker that exits as asked is
// closed, and Err stays nil.
func TestCloseAfterKillReportsTheDeath(t *testing.T) {
	for i := range 6 {
		p := start(t)
		require.NoError(t, syscall.Kill(p.Pid(), syscall.SIGKILL))
		require.NoError(t, p.Close(), "iteration %d", i)
		require.ErrorIs(t, p.Err(), worker.ErrWorkerDied, "iteration %d", i)
		assert.Contains(t, p.Err().Error(), "killed")

		q := start(t)
		_, err := q.Call(context.Background(), []byte("hi"))
		require.NoError(t, err)
		require.NoError(t, q.Close())
		require.NoError(t, q.Err(), "iteration %d: a clean close is no death", i)
	}
}

// With heartbeats off, a call that waits on a frozen worker still finds it: after hungAfter
// of silence the worker is pinged, and killed as hung when it does not answer. A worker busy
// with a long call answers the ping and is left alone.
func TestCallCheckWithoutHeartbeat(t *testing.T) {
	eachTransport(t, func(t *testing.T, start startFunc) {
		const hungAfter = 100 * time.Millisecond
		busy := start(t, worker.WithHeartbeat(0, hungAfter))
		_, err := busy.Call(context.Background(), []byte("sleep:1s"))
		require.NoError(t, err, "a long call is not a hang")
		require.NoError(t, busy.Close())

		frozen := start(t, worker.WithHeartbeat(0, hungAfter))
		require.NoError(t, syscall.Kill(frozen.Pid(), syscall.SIGSTOP))
		// The signal is delivered asynchronously: a call sent before the worker has stopped
		// may still be answered, which is no hang.
		require.Eventually(t, func() bool { return testproc.State(frozen.Pid()) == 'T' }, 5*time.Second, time.Millisecond, "the worker stops")
		errs := pendingCalls(t, frozen, 4, "after the freeze")
		for _, err := range collect(t, errs, 4, 5*time.Second) {
			require.ErrorIs(t, err, worker.ErrWorkerHung)
		}
		require.ErrorIs(t, frozen.Err(), worker.ErrWorkerHung)
	})
}
