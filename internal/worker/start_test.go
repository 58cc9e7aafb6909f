//go:build linux

package worker_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/testproc"
	"github.com/gpuactor/gpuactor/internal/worker"
)

// Workers that never start: each a clear error, nothing left running.
func TestStartFailures(t *testing.T) {
	notExec := filepath.Join(t.TempDir(), "not-executable")
	require.NoError(t, os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644))
	cases := []struct {
		name string
		opts []worker.Option
		want []string
	}{
		{"exits at once", []worker.Option{worker.WithEnv(modeVar + "=exit-now")},
			[]string{"exited before saying hello", "exit status 3", "exiting at once, as asked"}},
		{"never says hello", []worker.Option{worker.WithEnv(modeVar + "=no-hello"), worker.WithStartTimeout(300 * time.Millisecond)},
			[]string{"no hello within 300ms; killed"}},
		{"not executable", []worker.Option{worker.WithBinary(notExec)}, []string{notExec, "permission denied"}},
		{"no such binary", []worker.Option{worker.WithBinary("/nonexistent/gpuactor-worker")}, []string{"no such file"}},
		{"not a worker", []worker.Option{worker.WithBinary("/bin/true")}, []string{"/bin/true", "does its main call worker.Main", "exit status 0"}},
		{"not a worker, hangs", []worker.Option{worker.WithBinary("/bin/sleep", "60"), worker.WithStartTimeout(300 * time.Millisecond)},
			[]string{"/bin/sleep", "no hello"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			began := time.Now()
			p, err := worker.Start(context.Background(), c.opts...)
			require.ErrorIs(t, err, worker.ErrStartFailed)
			assert.Nil(t, p)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Less(t, time.Since(began), 3*time.Second)
			assert.Empty(t, testproc.Children(), "nothing left running")
		})
	}
}

// Start's ctx bounds the wait for the hello.
func TestStartCancelled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := worker.Start(ctx, worker.WithEnv(modeVar+"=no-hello"))
	require.ErrorIs(t, err, worker.ErrStartFailed)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Empty(t, testproc.Children())
}

// A process started as a worker whose main forgot to call Main must not start workers: each
// would run the program again.
func TestStartRefusedInAWorkerThatSkippedMain(t *testing.T) {
	t.Setenv("GPUACTOR_WORKER", "1")
	_, err := worker.Start(context.Background())
	require.ErrorIs(t, err, worker.ErrStartFailed)
	assert.Contains(t, err.Error(), "did not call worker.Main")
}
