package sim

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// fillFloats sets every element of the float array h to f(x, y, z).
func fillFloats(t *testing.T, d backend.Device, h backend.Array, f func(x, y, z int) float32) {
	t.Helper()
	a := d.(*device).lookupArray(h)
	require.NotNil(t, a)
	w, hh, dd := a.dims()
	for z := 0; z < int(dd); z++ {
		for y := 0; y < int(hh); y++ {
			for x := 0; x < int(w); x++ {
				binary.LittleEndian.PutUint32(a.texel(int64(x), int64(y), int64(z)), math.Float32bits(f(x, y, z)))
			}
		}
	}
}

// fetchKernel runs fetch once with the launch's texture (argument 0) and stores the result in
// the float at argument 1.
func fetchKernel(t *testing.T, d backend.Device, s backend.Stream, tex cuda.TextureObject, fetch func(c *backend.KernelCall, t cuda.TextureObject) float32) float32 {
	t.Helper()
	k := kernels(t, d, map[string]backend.SimKernel{"fetch": func(c *backend.KernelCall) error {
		cuda.SimSlice[float32](c, 1, 1)[0] = fetch(c, c.TextureArg(0))
		return nil
	}})["fetch"]
	out := malloc(t, d, 4)
	launch(t, d, k, s, backend.Arg{Kind: cuda.Texture, Bits: uint64(tex)}, ptrArg(out))
	got := []float32{0}
	require.NoError(t, d.CopyDtoH(hostPtr(got), out, 4, s))
	require.NoError(t, d.StreamSynchronize(s))
	return got[0]
}

func TestTextureOverArrays(t *testing.T) {
	_, d, _ := open(t)
	s := mkStream(t, d)
	f32 := cuda.Channels[float32](1)
	mkTex := func(res backend.ResourceDesc, desc backend.TextureDesc) cuda.TextureObject {
		tex, err := d.CreateTextureObject(res, desc, backend.ResourceViewDesc{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = d.DestroyTextureObject(tex) })
		return tex
	}
	linearClamp := backend.TextureDesc{AddressX: backend.AddressClamp, AddressY: backend.AddressClamp, AddressZ: backend.AddressClamp, Filter: backend.FilterLinear}

	vol, err := d.Malloc3DArray(f32, backend.Extent3D{Width: 2, Height: 2, Depth: 2}, 0)
	require.NoError(t, err)
	fillFloats(t, d, vol, func(x, y, z int) float32 { return float32(x + 10*y + 100*z) })
	tex := mkTex(backend.ResourceDesc{Type: backend.ResourceArray, Array: vol}, linearClamp)
	assert.Equal(t, float32(55.5), fetchKernel(t, d, s, tex, func(c *backend.KernelCall, t cuda.TextureObject) float32 {
		return cuda.SimTex3D[float32](c, t, 1, 1, 1)
	}), "trilinear between all eight texels")

	layers, err := d.Malloc3DArray(f32, backend.Extent3D{Width: 2, Height: 2, Depth: 3}, backend.ArrayLayered)
	require.NoError(t, err)
	fillFloats(t, d, layers, func(x, y, z int) float32 { return float32(100*z + 2*y + x) })
	tex = mkTex(backend.ResourceDesc{Type: backend.ResourceArray, Array: layers}, backend.TextureDesc{})
	assert.Equal(t, float32(201), fetchKernel(t, d, s, tex, func(c *backend.KernelCall, t cuda.TextureObject) float32 {
		return cuda.SimTex2DLayered[float32](c, t, 1.5, 0.5, 2)
	}))
	assert.Equal(t, float32(203), fetchKernel(t, d, s, tex, func(c *backend.KernelCall, t cuda.TextureObject) float32 {
		return cuda.SimTex2DLayered[float32](c, t, 1.5, 1.5, 9)
	}), "a layer past the last clamps")

	cube, err := d.Malloc3DArray(f32, backend.Extent3D{Width: 2, Height: 2, Depth: 6}, backend.ArrayCubemap)
	require.NoError(t, err)
	fillFloats(t, d, cube, func(x, y, z int) float32 { return float32(10*z + 2*y + x) })
	tex = mkTex(backend.ResourceDesc{Type: backend.ResourceArray, Array: cube}, backend.TextureDesc{})
	for _, c := range []struct {
		x, y, z float32
		want    float32
	}{{-1, 0.1, 0.2, 11}, {1, -0.3, -0.4, 3}, {0.2, 0.1, -1, 50}} {
		got := fetchKernel(t, d, s, tex, func(k *backend.KernelCall, t cuda.TextureObject) float32 {
			return cuda.SimTexCubemap[float32](k, t, c.x, c.y, c.z)
		})
		assert.Equal(t, c.want, got, "direction (%v, %v, %v)", c.x, c.y, c.z)
	}

	mip, err := d.MallocMipmappedArray(f32, backend.Extent3D{Width: 4, Height: 4}, 3, 0)
	require.NoError(t, err)
	for l := uint32(0); l < 3; l++ {
		lv, err := d.MipmappedArrayLevel(mip, l)
		require.NoError(t, err)
		fillFloats(t, d, lv, func(x, y, z int) float32 { return float32(1000*int(l) + x) })
	}
	// The GPU makes a mipmapped texture without normalized coordinates too; level 0 is read in
	// its texels.
	unnorm := mkTex(backend.ResourceDesc{Type: backend.ResourceMipmapped, Mipmapped: mip}, backend.TextureDesc{})
	assert.Equal(t, float32(2), fetchKernel(t, d, s, unnorm, func(c *backend.KernelCall, t cuda.TextureObject) float32 {
		return cuda.SimTex2DLod[float32](c, t, 2.5, 1.5, 0)
	}), "unnormalized coordinates at level 0: texel (2, 1)")
	tex = mkTex(backend.ResourceDesc{Type: backend.ResourceMipmapped, Mipmapped: mip}, backend.TextureDesc{Normalized: 1, AddressX: backend.AddressClamp, AddressY: backend.AddressClamp, MipmapFilter: backend.FilterLinear, MaxMipmapLevelClamp: 2})
	assert.Equal(t, float32(1001), fetchKernel(t, d, s, tex, func(c *backend.KernelCall, t cuda.TextureObject) float32 {
		return cuda.SimTex2DLod[float32](c, t, 0.6, 0.6, 1)
	}), "level 1 is 2×2: x = 0.6 is its texel 1")
	assert.Equal(t, float32(1500.5), fetchKernel(t, d, s, tex, func(c *backend.KernelCall, t cuda.TextureObject) float32 {
		return cuda.SimTex2DLod[float32](c, t, 0.6, 0.6, 1.5)
	}), "half way between levels 1 and 2 (texel 1 of 2, texel 0 of 1)")

	require.NoError(t, d.FreeArray(vol))
	_, err = d.CreateTextureObject(backend.ResourceDesc{Type: backend.ResourceArray, Array: vol}, backend.TextureDesc{}, backend.ResourceViewDesc{})
	requireCode(t, err, cudaerr.InvalidResourceHandle)
}

func TestSurfaces(t *testing.T) {
	_, d, _ := open(t)
	s := mkStream(t, d)
	i32 := cuda.Channels[int32](1)
	plain, err := d.MallocArray(i32, 4, 2, 0)
	require.NoError(t, err)
	_, err = d.CreateSurfaceObject(backend.ResourceDesc{Type: backend.ResourceArray, Array: plain})
	requireCode(t, err, cudaerr.InvalidValue)
	assert.ErrorContains(t, err, "surface load/store flag")

	arr, err := d.MallocArray(i32, 4, 2, backend.ArraySurfaceLoadStore)
	require.NoError(t, err)
	surf, err := d.CreateSurfaceObject(backend.ResourceDesc{Type: backend.ResourceArray, Array: arr})
	require.NoError(t, err)
	res, err := d.SurfaceObjectResourceDesc(surf)
	require.NoError(t, err)
	assert.Equal(t, backend.ResourceDesc{Type: backend.ResourceArray, Array: arr}, res)

	k := kernels(t, d, map[string]backend.SimKernel{"rw": func(c *backend.KernelCall) error {
		sf := c.SurfaceArg(0)
		out := cuda.SimSlice[int32](c, 1, 3)
		cuda.SimSurf2DWrite[int32](c, sf, 42, 8, 1, cuda.BoundaryTrap) // element (2, 1)
		out[0] = cuda.SimSurf2DRead[int32](c, sf, 8, 1, cuda.BoundaryTrap)
		out[1] = cuda.SimSurf2DRead[int32](c, sf, 100, 1, cuda.BoundaryZero)
		out[2] = cuda.SimSurf2DRead[int32](c, sf, 100, 1, cuda.BoundaryClamp) // element (3, 1)
		cuda.SimSurf2DWrite[int32](c, sf, 7, -4, 0, cuda.BoundaryZero)        // dropped
		return nil
	}, "trap": func(c *backend.KernelCall) error {
		cuda.SimSurf2DWrite[int32](c, c.SurfaceArg(0), 1, 16, 0, cuda.BoundaryTrap)
		return nil
	}})
	a := d.(*device).lookupArray(arr)
	binary.LittleEndian.PutUint32(a.texel(3, 1, 0), 9)
	out := malloc(t, d, 12)
	launch(t, d, k["rw"], s, backend.Arg{Kind: cuda.Surface, Bits: uint64(surf)}, ptrArg(out))
	got := make([]int32, 3)
	require.NoError(t, d.CopyDtoH(hostPtr(got), out, 12, s))
	require.NoError(t, d.StreamSynchronize(s))
	assert.Equal(t, []int32{42, 0, 9}, got)
	assert.Equal(t, uint32(42), binary.LittleEndian.Uint32(a.texel(2, 1, 0)), "the write landed in the array")
	assert.Equal(t, uint32(0), binary.LittleEndian.Uint32(a.texel(0, 0, 0)))

	require.NoError(t, d.DestroySurfaceObject(surf))
	requireCode(t, d.DestroySurfaceObject(surf), cudaerr.InvalidValue)

	surf, err = d.CreateSurfaceObject(backend.ResourceDesc{Type: backend.ResourceArray, Array: arr})
	require.NoError(t, err)
	launch(t, d, k["trap"], s, backend.Arg{Kind: cuda.Surface, Bits: uint64(surf)})
	err = d.StreamSynchronize(s)
	require.Error(t, err, "a write past the surface in trap mode faults the kernel")
	assert.ErrorContains(t, err, "boundary mode trap")
}

func TestTextureViews(t *testing.T) {
	_, d, _ := open(t)
	s := mkStream(t, d)
	u32 := cuda.Channels[uint32](1)
	arr, err := d.Malloc3DArray(u32, backend.Extent3D{Width: 2, Height: 1, Depth: 3}, backend.ArrayLayered)
	require.NoError(t, err)
	a := d.(*device).lookupArray(arr)
	for z := int64(0); z < 3; z++ {
		binary.LittleEndian.PutUint32(a.texel(1, 0, z), 0x04030201+uint32(z)*0x10101010)
	}
	res := backend.ResourceDesc{Type: backend.ResourceArray, Array: arr}
	view := backend.ResourceViewDesc{Format: 0x03, Width: 2, Height: 1, Depth: 3, FirstLayer: 1, LastLayer: 2} // uchar4, layers 1..2
	tex, err := d.CreateTextureObject(res, backend.TextureDesc{}, view)
	require.NoError(t, err)
	got, err := d.TextureObjectViewDesc(tex)
	require.NoError(t, err)
	assert.Equal(t, view, got)
	k := kernels(t, d, map[string]backend.SimKernel{"rgba": func(c *backend.KernelCall) error {
		out := cuda.SimSlice[[4]uint8](c, 1, 2)
		out[0] = cuda.SimTex2DLayered[[4]uint8](c, c.TextureArg(0), 1.5, 0.5, 0) // the view's layer 0: the array's 1
		out[1] = cuda.SimTex2DLayered[[4]uint8](c, c.TextureArg(0), 1.5, 0.5, 7) // clamps to the view's last: 2
		return nil
	}})["rgba"]
	out := malloc(t, d, 8)
	launch(t, d, k, s, backend.Arg{Kind: cuda.Texture, Bits: uint64(tex)}, ptrArg(out))
	rgba := make([][4]uint8, 2)
	require.NoError(t, d.CopyDtoH(hostPtr(rgba), out, 8, s))
	require.NoError(t, d.StreamSynchronize(s))
	assert.Equal(t, [][4]uint8{{0x11, 0x12, 0x13, 0x14}, {0x21, 0x22, 0x23, 0x24}}, rgba, "uint32 texels read as uchar4")

	for _, c := range []struct {
		view backend.ResourceViewDesc
		code cudaerr.Code
		why  string
	}{
		{backend.ResourceViewDesc{Format: 0x01, Width: 2, Height: 1, Depth: 3}, cudaerr.InvalidValue, "1-byte elements"},
		{backend.ResourceViewDesc{Format: 0x19, Width: 2, Height: 1, Depth: 3}, cudaerr.NotSupported, "block compressed"},
		{backend.ResourceViewDesc{Format: 0x0d, Width: 4, Height: 1, Depth: 3}, cudaerr.InvalidValue, "keeps the array's"},
		{backend.ResourceViewDesc{Format: 0x0d, Width: 2, Height: 1, Depth: 3, LastLayer: 3}, cudaerr.InvalidValue, "view layers"},
		{backend.ResourceViewDesc{Format: 0x0d, Width: 2, Height: 1, Depth: 3, LastMipmapLevel: 1}, cudaerr.InvalidValue, "not mipmapped"},
	} {
		_, err := d.CreateTextureObject(res, backend.TextureDesc{}, c.view)
		requireCode(t, err, c.code)
		assert.ErrorContains(t, err, c.why)
	}
	f, ok := viewFormat(0x18)
	assert.True(t, ok)
	assert.Equal(t, cuda.Channels[float32](4), f)
	f, _ = viewFormat(0x0b)
	assert.Equal(t, cuda.Channels[int16](2), f)
}
