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

// A non-blocking split, against the stand-in libnccl of internal/nccl (built with cc): the
// device hands out a slot until the parent reports the split done, then translates it to
// the comm NCCL wrote there.
func TestCollSplitTranslatesItsSlot(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the stand-in libnccl")
	}
	so := filepath.Join(t.TempDir(), "libnccl.so.2")
	out, err := exec.Command(cc, "-shared", "-fPIC", "-O1", "-o", so, "../nccl/testdata/fakenccl.c").CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Setenv(nccl.EnvVar, so)
	l, err := nccl.Load()
	require.NoError(t, err)
	if l.Path() != so {
		t.Skipf("a libnccl was loaded in this process already (%s)", l.Path())
	}

	d := &device{}
	h, err := d.CollCommSplit(0x1234, 2, 0, backend.CommConfig{})
	require.NoError(t, err, "a split under way is handed out with no error")
	require.NotZero(t, h)
	assert.NotEqualValues(t, 0x9abc, h, "the comm is not known yet")

	require.ErrorIs(t, d.CollLaunch(h, 0, []backend.CollOp{{Kind: backend.CollAllReduce, Count: 1}}), errSplitPending)
	assert.ErrorIs(t, d.CollCommAsyncError(h), backend.ErrCollInProgress)
	assert.ErrorIs(t, d.CollCommAsyncError(h), backend.ErrCollInProgress)
	require.NoError(t, d.CollCommAsyncError(h))
	assert.EqualValues(t, 0x9abc, d.comm(h), "the slot now holds the comm NCCL made")

	require.NoError(t, d.CollCommDestroy(h))
	assert.Empty(t, d.splits, "a destroyed split's slot is dropped")

	// A blocking-fast split returns the comm itself; NoColor returns none.
	h, err = d.CollCommSplit(0x1234, 1, 0, backend.CommConfig{SplitShare: true})
	require.NoError(t, err)
	assert.EqualValues(t, 0x5678, h)
	h, err = d.CollCommSplit(0x1234, backend.SplitNoColor, 0, backend.CommConfig{})
	require.NoError(t, err)
	assert.Zero(t, h)

	// A split abandoned before it finished keeps its slot (NCCL may still write to it).
	h, err = d.CollCommSplit(0x1234, 3, 0, backend.CommConfig{})
	require.NoError(t, err, "NCCL's in-progress answer is no error either")
	require.NoError(t, d.CollCommAbort(h))
	assert.Len(t, d.splits, 1)
}
