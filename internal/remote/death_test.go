//go:build linux

package remote_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/remote"
	"github.com/gpuactor/gpuactor/internal/worker"
)

func TestKilledWorkerFailsPendingAndLaterCalls(t *testing.T) {
	be, dv := open(t)
	s, err := dv.StreamCreate(backend.StreamDefault, 0)
	require.NoError(t, err)
	require.NoError(t, be.Health(0).Err())

	// Callers keep calls in flight until the worker dies under them.
	const callers = 8
	errs := make(chan error, callers)
	var started sync.WaitGroup
	started.Add(callers)
	for range callers {
		go func() {
			started.Done()
			for {
				if err := dv.StreamQuery(s); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	started.Wait()
	time.Sleep(10 * time.Millisecond)
	killed := time.Now()
	require.NoError(t, syscall.Kill(be.Process().Pid(), syscall.SIGKILL))
	for range callers {
		select {
		case err := <-errs:
			require.ErrorIs(t, err, worker.ErrWorkerDied)
			require.ErrorIs(t, err, cudaerr.DevicesUnavailable)
		case <-time.After(5 * time.Second):
			t.Fatal("a pending call did not fail after the worker was killed")
		}
	}
	assert.Less(t, time.Since(killed), time.Second, "pending calls fail promptly")

	// Health says so without a call, and every later call fails at once.
	require.Eventually(t, func() bool { return be.Health(0).Err() != nil }, time.Second, time.Millisecond)
	require.ErrorIs(t, be.Health(0).Err(), worker.ErrWorkerDied)
	require.ErrorIs(t, be.Health(0).Err(), cudaerr.DevicesUnavailable)
	begin := time.Now()
	_, err = dv.Malloc(256)
	require.ErrorIs(t, err, worker.ErrWorkerDied)
	_, err = be.DeviceCount()
	require.ErrorIs(t, err, worker.ErrWorkerDied)
	assert.Less(t, time.Since(begin), 100*time.Millisecond)
	assert.Contains(t, err.Error(), "isolated device lost")
	assert.Contains(t, err.Error(), "killed")
}

func TestClosedBackendRefusesCalls(t *testing.T) {
	be, dv := open(t)
	require.NoError(t, be.Close())
	err := dv.StreamQuery(0)
	require.Error(t, err)
	assert.True(t, errors.Is(err, worker.ErrClosed) || errors.Is(err, worker.ErrWorkerDied), "%v", err)
	require.ErrorIs(t, err, cudaerr.DevicesUnavailable)
	// A clean close is no failure: the device layer reads it as closed.
	<-be.Process().Done()
	require.NoError(t, be.Health(0).Err())
}

func TestStickyFaultIsTheWorkersLastAnswer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	be, err := remote.New(ctx, func(ctx context.Context) (*worker.Process, error) {
		return remote.Start(ctx, worker.WithEnv(backendVar+"=sim-sticky"), worker.WithStderr(io.Discard))
	})
	require.NoError(t, err)
	defer be.Close()
	dv, err := be.Open(0)
	require.NoError(t, err)
	p, err := dv.Malloc(4096)
	require.NoError(t, err)
	require.NoError(t, dv.Memset(p, 1, 4096, 0))
	require.NoError(t, dv.Memset(p, 2, 4096, 0))
	err = dv.Synchronize()
	require.ErrorIs(t, err, cudaerr.LaunchFailure, "the sticky error itself comes back")
	require.True(t, cudaerr.IsSticky(err))

	select {
	case <-be.Process().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the worker went on after a sticky error")
	}
	_, err = dv.Malloc(4096)
	require.ErrorIs(t, err, worker.ErrWorkerDied)
	assert.Contains(t, err.Error(), "sticky error", "the worker's stderr says why it exited")
	require.Eventually(t, func() bool { return errors.Is(be.Health(0).Err(), worker.ErrWorkerDied) }, time.Second, time.Millisecond)
}

func TestWithFailureWrapsTheHealthError(t *testing.T) {
	errFailed := errors.New("device failed")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	be, err := remote.New(ctx, func(ctx context.Context) (*worker.Process, error) { return remote.Start(ctx) },
		remote.WithFailure(func(lost error) error { return fmt.Errorf("%w: %w", errFailed, lost) }))
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(be.Process().Pid(), syscall.SIGKILL))
	<-be.Process().Done()
	require.Eventually(t, func() bool { return be.Health(0).Err() != nil }, time.Second, time.Millisecond)
	require.ErrorIs(t, be.Health(0).Err(), errFailed)
	require.ErrorIs(t, be.Health(0).Err(), worker.ErrWorkerDied)
	require.NoError(t, be.Close())
}
