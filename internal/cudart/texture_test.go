package cudart

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// The offsets and sizes are those of the CUDA 13.0 headers (driver_types.h, texture_types.h)
// on a 64-bit host.
func TestTextureStructLayout(t *testing.T) {
	var r resourceDesc
	assert.EqualValues(t, 144, unsafe.Sizeof(r))
	assert.EqualValues(t, 8, unsafe.Offsetof(r.res))
	assert.EqualValues(t, 136, unsafe.Offsetof(r.flags))
	var p resPitch2D
	assert.EqualValues(t, 20, unsafe.Sizeof(cuda.ChannelFormat{}))
	assert.EqualValues(t, 8, unsafe.Offsetof(p.desc))
	assert.EqualValues(t, 32, unsafe.Offsetof(p.width)) // linear: sizeInBytes
	assert.EqualValues(t, 40, unsafe.Offsetof(p.height))
	assert.EqualValues(t, 48, unsafe.Offsetof(p.pitch))
	assert.LessOrEqual(t, unsafe.Sizeof(p), unsafe.Sizeof(r.res))

	var x textureDesc
	assert.EqualValues(t, 72, unsafe.Sizeof(x))
	assert.EqualValues(t, 12, unsafe.Offsetof(x.filterMode))
	assert.EqualValues(t, 20, unsafe.Offsetof(x.sRGB))
	assert.EqualValues(t, 24, unsafe.Offsetof(x.borderColor))
	assert.EqualValues(t, 40, unsafe.Offsetof(x.normalizedCoords))
	assert.EqualValues(t, 48, unsafe.Offsetof(x.mipmapFilterMode))
	assert.EqualValues(t, 64, unsafe.Offsetof(x.disableTrilinearOptimization))
	assert.EqualValues(t, 68, unsafe.Offsetof(x.seamlessCubemap))

	var v resourceViewDesc
	assert.EqualValues(t, 112, unsafe.Sizeof(v))
	assert.EqualValues(t, 8, unsafe.Offsetof(v.width))
	assert.EqualValues(t, 32, unsafe.Offsetof(v.firstMipmapLevel))
	assert.EqualValues(t, 44, unsafe.Offsetof(v.lastLayer))
	assert.EqualValues(t, 48, unsafe.Offsetof(v.reserved))
}

func TestTextureDescsRoundTrip(t *testing.T) {
	f := cuda.Channels[uint8](4)
	for _, res := range []backend.ResourceDesc{
		{Type: backend.ResourceArray, Array: 0x1234},
		{Type: backend.ResourceMipmapped, Mipmapped: 0x5678},
		{Type: backend.ResourceLinear, Ptr: 0x7000_0000, Format: f, Size: 4096},
		{Type: backend.ResourcePitch2D, Ptr: 0x7000_0200, Format: f, Width: 30, Height: 7, Pitch: 128},
	} {
		c := packResourceDesc(res)
		require.Equal(t, res, unpackResourceDesc(&c))
	}
	c := packResourceDesc(backend.ResourceDesc{Type: backend.ResourceLinear, Ptr: 0xabc, Format: f, Size: 99})
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&c)), unsafe.Sizeof(c))
	assert.EqualValues(t, 2, raw[0], "resType linear")
	assert.EqualValues(t, 0xbc, raw[8], "devPtr at the union's start")
	assert.EqualValues(t, 8, raw[16], "desc.x")
	assert.EqualValues(t, 8, raw[28], "desc.w")
	assert.EqualValues(t, 1, raw[32], "desc.f unsigned")
	assert.EqualValues(t, 99, raw[40], "sizeInBytes")

	td := backend.TextureDesc{AddressX: 3, AddressY: 2, AddressZ: 1, Filter: 1, Read: 1, SRGB: 1,
		BorderR: 0.25, BorderG: 0.5, BorderB: 0.75, BorderA: 1, Normalized: 1, MaxAnisotropy: 4,
		MipmapFilter: 1, MipmapLevelBias: -1, MinMipmapLevelClamp: 0.5, MaxMipmapLevelClamp: 3,
		DisableTrilinear: 1, SeamlessCubemap: 1}
	ct := packTextureDesc(td)
	require.Equal(t, td, unpackTextureDesc(&ct))
	vd := backend.ResourceViewDesc{Format: 0x18, Width: 1, Height: 2, Depth: 3, FirstMipmapLevel: 4,
		LastMipmapLevel: 5, FirstLayer: 6, LastLayer: 7}
	cv := packViewDesc(vd)
	require.Equal(t, vd, unpackViewDesc(&cv))
}
