//go:build linux

package worker_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/worker"
)

// A worker started with ProfileEnv writes its CPU profile, named by the variable and its
// process ID, by the time Close returns; one whose profile cannot be written says so and
// serves all the same.
func TestWorkerCPUProfile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p, err := worker.Start(ctx, worker.WithEnv(worker.ProfileEnv+"="+filepath.Join(dir, "w")))
	require.NoError(t, err)
	got, err := p.Call(ctx, []byte("hello"))
	require.NoError(t, err)
	assert.Equal(t, "hello", string(got))
	require.NoError(t, p.Close())

	data, err := os.ReadFile(filepath.Join(dir, "w."+strconv.Itoa(p.Pid())))
	require.NoError(t, err, "the worker's profile")
	assert.True(t, bytes.HasPrefix(data, []byte{0x1f, 0x8b}), "a pprof profile is gzipped")

	var stderr bytes.Buffer
	p, err = worker.Start(ctx, worker.WithEnv(worker.ProfileEnv+"="+filepath.Join(dir, "missing", "w")),
		worker.WithStderr(&stderr))
	require.NoError(t, err)
	got, err = p.Call(ctx, []byte("still serving"))
	require.NoError(t, err)
	assert.Equal(t, "still serving", string(got))
	require.NoError(t, p.Close())
	assert.Contains(t, stderr.String(), "no CPU profile ("+worker.ProfileEnv+")")
}
