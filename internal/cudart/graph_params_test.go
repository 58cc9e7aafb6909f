package cudart

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// A 1D copy node reads back as the runtime stores it: one row of pitched memory on each side,
// an extent of (count, 1, 1).
func TestCopy1DFromMemcpy3DParms(t *testing.T) {
	p := Memcpy3DParms{
		SrcPtr: PitchedPtr{Ptr: 0x1000, Pitch: 256, XSize: 256, YSize: 1},
		DstPtr: PitchedPtr{Ptr: 0x2000, Pitch: 256, XSize: 256, YSize: 1},
		DstPos: Pos{X: 16},
		Extent: Extent{Width: 128, Height: 1, Depth: 1},
		Kind:   MemcpyDefault,
	}
	c, err := copy1D(p)
	require.NoError(t, err)
	assert.Equal(t, backend.CopyNode{Dst: 0x2010, Src: 0x1000, Bytes: 128, Kind: backend.CopyDefault}, c)

	for name, bad := range map[string]Memcpy3DParms{
		"array source": {SrcArray: 1, Extent: Extent{Width: 4, Height: 1, Depth: 1}},
		"2D":           {Extent: Extent{Width: 4, Height: 2, Depth: 1}},
		"3D":           {Extent: Extent{Width: 4, Height: 1, Depth: 3}},
	} {
		_, err := copy1D(bad)
		require.ErrorIs(t, err, cudaerr.NotSupported, name)
	}
}

// The memcpy kinds cross unchanged between the backend's and the runtime's names.
func TestCopyKindsMatchMemcpyKinds(t *testing.T) {
	assert.Equal(t, int32(MemcpyHostToHost), int32(backend.CopyHostToHost))
	assert.Equal(t, int32(MemcpyHostToDevice), int32(backend.CopyHostToDevice))
	assert.Equal(t, int32(MemcpyDeviceToHost), int32(backend.CopyDeviceToHost))
	assert.Equal(t, int32(MemcpyDeviceToDevice), int32(backend.CopyDeviceToDevice))
	assert.Equal(t, int32(MemcpyDefault), int32(backend.CopyDefault))
}
