//go:build linux

package worker_test

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/worker"
	"github.com/gpuactor/gpuactor/supervise"
)

var _ supervise.Child = (*worker.Process)(nil)

// A supervisor restarts a killed worker; calls on the old one fail with ErrWorkerDied, even
// while the restart is under way, and calls on the new one work.
func TestSupervisorRestartsAKilledWorker(t *testing.T) {
	ctx := context.Background()
	restarted := make(chan int, 4)
	sup, err := supervise.New(ctx, func(ctx context.Context) (*worker.Process, error) {
		return worker.Start(ctx)
	}, supervise.WithCheckEvery(time.Millisecond), supervise.WithBackoff(300*time.Millisecond),
		supervise.OnRestart(func(gen int) { restarted <- gen }))
	require.NoError(t, err)
	defer func() { require.NoError(t, sup.Close()) }()

	first, err := sup.Current()
	require.NoError(t, err)
	got, err := first.Call(ctx, []byte("pid"))
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(first.Pid()), string(got))

	errs := pendingCalls(t, first, 4, "sleep:1m")
	require.NoError(t, syscall.Kill(first.Pid(), syscall.SIGKILL))
	for _, err := range collect(t, errs, 4, time.Second) {
		require.ErrorIs(t, err, worker.ErrWorkerDied)
	}

	// During the backoff: a caller still holding the old worker, with a ctx of its own, is
	// answered at once, never left waiting for the restart.
	require.Eventually(t, func() bool { return sup.Stats().State == supervise.Restarting }, time.Second, time.Millisecond)
	cur, err := sup.Current()
	require.NoError(t, err)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = cur.Call(cctx, []byte("x"))
	require.ErrorIs(t, err, context.Canceled)
	cctx, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = cur.Call(cctx, []byte("x"))
	cancel()
	require.ErrorIs(t, err, worker.ErrWorkerDied)

	select {
	case gen := <-restarted:
		assert.Equal(t, 2, gen)
	case <-time.After(5 * time.Second):
		t.Fatal("no restart")
	}
	second, err := sup.Current()
	require.NoError(t, err)
	assert.NotEqual(t, first.Pid(), second.Pid())
	got, err = second.Call(ctx, []byte("pid"))
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(second.Pid()), string(got), "the new worker serves")
	st := sup.Stats()
	assert.Equal(t, 1, st.Restarts)
	assert.Contains(t, st.LastFailure, "signal: killed")
}

// A worker that cannot start again: the supervisor spends its restarts and gives up cleanly.
func TestSupervisorGivesUpWhenWorkersCannotStart(t *testing.T) {
	ctx := context.Background()
	n := 0
	sup, err := supervise.New(ctx, func(ctx context.Context) (*worker.Process, error) {
		n++
		if n == 1 {
			return worker.Start(ctx)
		}
		return worker.Start(ctx, worker.WithEnv(modeVar+"=exit-now"))
	}, supervise.WithCheckEvery(time.Millisecond), supervise.WithBackoff(time.Millisecond),
		supervise.WithRestarts(2, time.Minute))
	require.NoError(t, err)
	p, err := sup.Current()
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(p.Pid(), syscall.SIGKILL))
	select {
	case <-sup.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the supervisor did not give up")
	}
	_, err = sup.Current()
	require.ErrorIs(t, err, supervise.ErrGaveUp)
	require.ErrorIs(t, err, worker.ErrStartFailed)
	assert.Contains(t, err.Error(), "exit status 3")
	require.NoError(t, sup.Close())
}
