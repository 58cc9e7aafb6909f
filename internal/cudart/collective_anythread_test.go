//go:build linux && (amd64 || arm64)

package cudart

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/nccl"
)

func TestCollConfigMapsBlocking(t *testing.T) {
	assert.EqualValues(t, 0, collConfig(backend.CommConfig{}).Blocking, "non-blocking unless asked")
	assert.EqualValues(t, 1, collConfig(backend.CommConfig{Blocking: true}).Blocking)
	assert.EqualValues(t, nccl.Undef, collConfig(backend.CommConfig{Blocking: true}).MinCTAs, "other fields keep NCCL's default")
}

// The any-thread abort, against the stand-in libnccl: called from a goroutine that is no
// actor's, it reaches ncclCommAbort and touches no actor-thread state.
func TestCollCommAbortAnyThread(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the stand-in libnccl")
	}
	so := filepath.Join(t.TempDir(), "libnccl.so.2")
	out, err := exec.Command(cc, "-shared", "-fPIC", "-O1", "-o", so, "../nccl/testdata/fakenccl.c").CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Setenv(nccl.EnvVar, so)
	if _, err := nccl.Load(); err != nil {
		t.Skipf("no libnccl: %v", err)
	}

	d := &device{}
	var aborter backend.CollAnyThreadAborter = d
	done := make(chan error)
	go func() { done <- aborter.CollCommAbortAnyThread(0x1234) }()
	require.NoError(t, <-done)
	assert.Nil(t, d.splits, "no split slot was made or read")

	var cerr *backend.CollError
	require.ErrorAs(t, aborter.CollCommAbortAnyThread(0), &cerr, "a nil comm is refused before NCCL sees it")
	assert.Equal(t, backend.CollInvalidArgument, cerr.Code)
}
