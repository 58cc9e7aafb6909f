package remote

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// TestCodecCarriesCollectiveErrors: NCCL's errors match in the parent as in the worker, bare
// or wrapped, and do not disturb the CUDA codes.
func TestCodecCarriesCollectiveErrors(t *testing.T) {
	ce := &backend.CollError{Code: backend.CollRemoteError, Call: "ncclAllReduce", Detail: "rank 2 left"}
	var c Codec
	back := c.Decode(c.Encode(ce))
	got, ok := errors.AsType[*backend.CollError](back)
	require.True(t, ok, "%T", back)
	assert.Equal(t, ce, got)
	assert.Equal(t, ce.Error(), back.Error())

	wrapped := fmt.Errorf("launch 3: %w", ce)
	back = c.Decode(c.Encode(wrapped))
	got, ok = errors.AsType[*backend.CollError](back)
	require.True(t, ok)
	assert.Equal(t, ce, got)
	assert.Equal(t, wrapped.Error(), back.Error())

	assert.Same(t, backend.ErrCollInProgress, c.Decode(c.Encode(backend.ErrCollInProgress)))
	back = c.Decode(c.Encode(fmt.Errorf("split: %w", backend.ErrCollInProgress)))
	assert.ErrorIs(t, back, backend.ErrCollInProgress)
	assert.Equal(t, "split: "+backend.ErrCollInProgress.Error(), back.Error())

	cu := &cudaerr.Error{Op: "cudaMalloc", Code: cudaerr.MemoryAllocation, Message: "out of memory"}
	assert.ErrorIs(t, c.Decode(c.Encode(cu)), cudaerr.MemoryAllocation)
	_, isColl := errors.AsType[*backend.CollError](c.Decode(c.Encode(errors.New("plain"))))
	assert.False(t, isColl)
}

// TestCommConfigCrossesTheWire: every field of a communicator's config, Blocking included,
// reaches the worker as the parent set it.
func TestCommConfigCrossesTheWire(t *testing.T) {
	for _, cfg := range []backend.CommConfig{
		{},
		{Blocking: true},
		{Blocking: true, CGAClusterSize: 2, MinCTAs: 1, MaxCTAs: 4, NetName: "Socket", SplitShare: true},
		{CGAClusterSize: 4, NetName: "IB"},
	} {
		var e enc
		encCommConfig(&e, cfg)
		d := dec{b: e.b}
		assert.Equal(t, cfg, decCommConfig(&d))
		require.NoError(t, d.err)
		assert.Empty(t, d.b, "nothing left over")
	}
}
