package cudart

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// The runtime gives back the descriptors it was given: a field at the wrong offset of
// cudaResourceDesc, cudaTextureDesc or cudaResourceViewDesc comes back elsewhere, or is
// refused. The border colour is the exception: the runtime does not report it, and the binding
// gives zero rather than the stale bytes it leaves.
func TestGPUTextureObjectDescriptors(t *testing.T) {
	rt := gpuRuntime(t)
	p, pitch, err := rt.MallocPitch(40*4, 7)
	require.NoError(t, err)
	defer rt.Free(p) //nolint:errcheck
	f := cuda.Channels[uint8](4)
	res := backend.ResourceDesc{Type: backend.ResourcePitch2D, Ptr: p, Format: f, Width: 40, Height: 7, Pitch: pitch}
	desc := backend.TextureDesc{AddressX: backend.AddressBorder, AddressY: backend.AddressMirror, AddressZ: backend.AddressClamp,
		Filter: backend.FilterLinear, Read: backend.ReadNormalizedFloat, SRGB: 1,
		BorderR: 0.25, BorderG: 0.5, BorderB: 0.75, BorderA: 1, Normalized: 1, MaxAnisotropy: 1}
	tex, err := rt.CreateTextureObject(res, desc, backend.ResourceViewDesc{})
	require.NoError(t, err)
	require.NotZero(t, tex)
	gotRes, err := rt.TextureObjectResourceDesc(tex)
	require.NoError(t, err)
	assert.Equal(t, res, gotRes)
	gotDesc, err := rt.TextureObjectTextureDesc(tex)
	require.NoError(t, err)
	assert.Equal(t, desc.AddressX, gotDesc.AddressX)
	assert.Equal(t, desc.AddressY, gotDesc.AddressY)
	assert.Equal(t, desc.Filter, gotDesc.Filter)
	assert.Equal(t, desc.Read, gotDesc.Read)
	assert.Equal(t, desc.SRGB, gotDesc.SRGB)
	assert.Equal(t, []float32{0, 0, 0, 0}, []float32{gotDesc.BorderR, gotDesc.BorderG, gotDesc.BorderB, gotDesc.BorderA})
	assert.Equal(t, desc.Normalized, gotDesc.Normalized)
	assert.Equal(t, desc.MaxAnisotropy, gotDesc.MaxAnisotropy)
	require.NoError(t, rt.DestroyTextureObject(tex))

	// A view over an array comes back as given.
	arr, err := rt.MallocArray(cuda.Channels[uint32](1), 16, 4, 0)
	require.NoError(t, err)
	defer rt.FreeArray(arr) //nolint:errcheck
	view := backend.ResourceViewDesc{Format: 0x0d /* cudaResViewFormatUnsignedInt1 */, Width: 16, Height: 4}
	tex, err = rt.CreateTextureObject(backend.ResourceDesc{Type: backend.ResourceArray, Array: arr}, backend.TextureDesc{}, view)
	require.NoError(t, err)
	gotView, err := rt.TextureObjectViewDesc(tex)
	require.NoError(t, err)
	assert.Equal(t, view, gotView)
	require.NoError(t, rt.DestroyTextureObject(tex))

	lin := backend.ResourceDesc{Type: backend.ResourceLinear, Ptr: p, Format: cuda.Channels[float32](1), Size: 256}
	tex, err = rt.CreateTextureObject(lin, backend.TextureDesc{}, backend.ResourceViewDesc{})
	require.NoError(t, err)
	gotRes, err = rt.TextureObjectResourceDesc(tex)
	require.NoError(t, err)
	assert.Equal(t, lin, gotRes)
	require.NoError(t, rt.DestroyTextureObject(tex))

	// A pitch off the texture pitch alignment is refused.
	res.Pitch = pitch - 4
	_, err = rt.CreateTextureObject(res, desc, backend.ResourceViewDesc{})
	require.ErrorIs(t, err, cudaerr.InvalidValue)

	n, err := rt.Texture1DLinearMaxWidth(cuda.Channels[float32](4), 0)
	require.NoError(t, err)
	assert.Positive(t, n)
	_, err = rt.CreateSurfaceObject(lin)
	require.Error(t, err, "a surface over linear memory")
	_, err = rt.SurfaceObjectResourceDesc(0)
	require.Error(t, err)
}
