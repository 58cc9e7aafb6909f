package sim

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// sampleTex writes, for each of the n (x, y) pairs of argument 2, tex2D<float>(argument 0) to
// argument 3.
func sampleTex(c *backend.KernelCall) error {
	n := int(c.Int32(1))
	xy := cuda.SimSlice[float32](c, 2, 2*n)
	out := cuda.SimSlice[float32](c, 3, n)
	for i := range out {
		out[i] = cuda.SimTex2D[float32](c, c.TextureArg(0), xy[2*i], xy[2*i+1])
	}
	return nil
}

// pitchedTexture puts a 4x2 float image (value 10*y + x) in pitched memory of 128-byte rows and
// returns its resource.
func pitchedTexture(t *testing.T, d backend.Device, s backend.Stream) backend.ResourceDesc {
	p := malloc(t, d, 4096)
	img := make([]float32, 64) // two 128-byte rows
	for y := 0; y < 2; y++ {
		for x := 0; x < 4; x++ {
			img[32*y+x] = float32(10*y + x)
		}
	}
	require.NoError(t, d.CopyHtoD(p, hostPtr(img), 256, s))
	return backend.ResourceDesc{Type: backend.ResourcePitch2D, Ptr: p, Format: cuda.Channels[float32](1), Width: 4, Height: 2, Pitch: 128}
}

func sample(t *testing.T, d backend.Device, s backend.Stream, k backend.Kernel, tex cuda.TextureObject, xy ...float32) []float32 {
	t.Helper()
	n := len(xy) / 2
	in, out := malloc(t, d, uint64(len(xy))*4), malloc(t, d, uint64(n)*4)
	require.NoError(t, d.CopyHtoD(in, hostPtr(xy), uint64(len(xy))*4, s))
	launch(t, d, k, s, backend.Arg{Kind: cuda.Texture, Bits: uint64(tex)}, backend.Arg{Kind: cuda.Int32, Bits: uint64(n)}, ptrArg(in), ptrArg(out))
	got := make([]float32, n)
	require.NoError(t, d.CopyDtoH(hostPtr(got), out, uint64(n)*4, s))
	require.NoError(t, d.StreamSynchronize(s))
	return got
}

func TestTextureSamplingModes(t *testing.T) {
	_, d, _ := open(t)
	s := mkStream(t, d)
	k := kernels(t, d, map[string]backend.SimKernel{"sample": sampleTex})["sample"]
	res := pitchedTexture(t, d, s)
	mk := func(desc backend.TextureDesc) cuda.TextureObject {
		tex, err := d.CreateTextureObject(res, desc, backend.ResourceViewDesc{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = d.DestroyTextureObject(tex) })
		return tex
	}
	clamp := backend.TextureDesc{AddressX: backend.AddressClamp, AddressY: backend.AddressClamp}
	assert.Equal(t, []float32{0, 1, 13, 3, 10, 0, 13},
		sample(t, d, s, k, mk(clamp), 0.5, 0.5, 1.9, 0.1, 3.5, 1.5, 7, -3, -2, 1.2, -0.1, -0.1, 99, 99),
		"point sampling takes the texel under the coordinate, clamped at the edges")

	border := clamp
	border.AddressX, border.AddressY, border.BorderR = backend.AddressBorder, backend.AddressBorder, 7
	assert.Equal(t, []float32{1, 7, 7, 12}, sample(t, d, s, k, mk(border), 1.5, 0.5, -0.5, 0.5, 4.0, 1.0, 2.2, 1.7))

	wrap := backend.TextureDesc{Normalized: 1} // wrap in every dimension
	assert.Equal(t, []float32{0, 3, 10, 1}, sample(t, d, s, k, mk(wrap), 0.1, 0.2, -0.1, 0.2, 1.1, 0.7, 0.3, 2.25))
	mirror := backend.TextureDesc{Normalized: 1, AddressX: backend.AddressMirror, AddressY: backend.AddressMirror}
	assert.Equal(t, []float32{3, 0, 12}, sample(t, d, s, k, mk(mirror), 1.1, 0.2, -0.1, 0.2, 1.4, 0.7))

	wrapUnnormalized := backend.TextureDesc{} // wrap without normalized coordinates: clamp
	assert.Equal(t, []float32{3, 0}, sample(t, d, s, k, mk(wrapUnnormalized), 5.5, 0.5, -1.5, 0.5))

	lin := clamp
	lin.Filter = backend.FilterLinear
	got := sample(t, d, s, k, mk(lin), 1.0, 0.5, 1.5, 1.0, 1.25, 0.5, 0.0, 0.5)
	assert.InDeltaSlice(t, []float32{0.5, 6, 0.75, 0}, got, 1e-6, "linear: weights from the texel centres")
	got = sample(t, d, s, k, mk(lin), 1.0+1.0/1024, 0.5)
	assert.Equal(t, float32(0.5), got[0], "the weight has 8 fractional bits: 1/1024 past a texel centre rounds away")
}

func TestTextureReadModesAndFormats(t *testing.T) {
	_, d, _ := open(t)
	s := mkStream(t, d)
	k := kernels(t, d, map[string]backend.SimKernel{"fetch": func(c *backend.KernelCall) error {
		out := cuda.SimSlice[[4]float32](c, 1, 3)
		for i := range out {
			out[i] = cuda.SimTex1Dfetch[[4]float32](c, c.TextureArg(0), int32(i))
		}
		return nil
	}})["fetch"]
	p := malloc(t, d, 512)
	data := []int8{127, -128, 0, 64, -1, 2, 3, 4}
	require.NoError(t, d.CopyHtoD(p, hostPtr(data), 8, s))
	res := backend.ResourceDesc{Type: backend.ResourceLinear, Ptr: p, Format: cuda.Channels[int8](4), Size: 8}
	out := malloc(t, d, 48)
	for _, c := range []struct {
		read int32
		want [3][4]float32
	}{
		{backend.ReadElementType, [3][4]float32{{127, -128, 0, 64}, {-1, 2, 3, 4}, {}}},
		{backend.ReadNormalizedFloat, [3][4]float32{{1, -1, 0, 64.0 / 127}, {-1.0 / 127, 2.0 / 127, 3.0 / 127, 4.0 / 127}, {}}},
	} {
		tex, err := d.CreateTextureObject(res, backend.TextureDesc{Read: c.read}, backend.ResourceViewDesc{})
		require.NoError(t, err)
		launch(t, d, k, s, backend.Arg{Kind: cuda.Texture, Bits: uint64(tex)}, ptrArg(out))
		var got [3][4]float32
		require.NoError(t, d.CopyDtoH(hostPtr(got[:]), out, 48, s))
		require.NoError(t, d.StreamSynchronize(s))
		assert.Equal(t, c.want, got, "read mode %d; index 2 is past the end: zero", c.read)
		require.NoError(t, d.DestroyTextureObject(tex))
	}
	assert.Equal(t, float32(1), halfToFloat(0x3c00))
	assert.Equal(t, float32(-2), halfToFloat(0xc000))
	assert.InDelta(t, 0.214, srgbToLinear(0.5), 1e-3)
	assert.True(t, math.IsInf(float64(halfToFloat(0x7c00)), 1))
}

func TestTextureBadInput(t *testing.T) {
	_, d, _ := open(t)
	s := mkStream(t, d)
	res := pitchedTexture(t, d, s)
	_, err := d.CreateTextureObject(res, backend.TextureDesc{Filter: 5}, backend.ResourceViewDesc{})
	requireCode(t, err, cudaerr.InvalidValue)
	assert.ErrorContains(t, err, "filter mode 5")

	bad := res
	bad.Pitch = 100
	_, err = d.CreateTextureObject(bad, backend.TextureDesc{}, backend.ResourceViewDesc{})
	requireCode(t, err, cudaerr.InvalidValue)
	assert.ErrorContains(t, err, "texture pitch alignment")

	bad = res
	bad.Format = cuda.ChannelFormat{X: 8, Y: 8, Z: 8, Kind: cuda.ChannelUnsigned}
	_, err = d.CreateTextureObject(bad, backend.TextureDesc{}, backend.ResourceViewDesc{})
	requireCode(t, err, cudaerr.InvalidChannelDescriptor)

	bad = res
	bad.Ptr += 4
	_, err = d.CreateTextureObject(bad, backend.TextureDesc{}, backend.ResourceViewDesc{})
	assert.ErrorContains(t, err, "texture alignment")

	bad = res
	bad.Height = 1000
	_, err = d.CreateTextureObject(bad, backend.TextureDesc{}, backend.ResourceViewDesc{})
	assert.ErrorContains(t, err, "bytes at")

	_, err = d.CreateSurfaceObject(res)
	requireCode(t, err, cudaerr.InvalidValue)
	assert.ErrorContains(t, err, "needs an array resource")

	tex, err := d.CreateTextureObject(res, backend.TextureDesc{AddressX: 3, BorderG: 2}, backend.ResourceViewDesc{})
	require.NoError(t, err)
	got, err := d.TextureObjectTextureDesc(tex)
	require.NoError(t, err)
	assert.Equal(t, backend.TextureDesc{AddressX: 3}, got, "the border colour is not reported, as on the GPU")
	gotRes, err := d.TextureObjectResourceDesc(tex)
	require.NoError(t, err)
	assert.Equal(t, res, gotRes)
	require.NoError(t, d.DestroyTextureObject(tex))
	requireCode(t, d.DestroyTextureObject(tex), cudaerr.InvalidValue)
	_, err = d.TextureObjectResourceDesc(tex)
	requireCode(t, err, cudaerr.InvalidValue)

	// A kernel sampling a destroyed texture faults the device.
	k := kernels(t, d, map[string]backend.SimKernel{"sample": sampleTex})["sample"]
	in, out := malloc(t, d, 8), malloc(t, d, 4)
	launch(t, d, k, s, backend.Arg{Kind: cuda.Texture, Bits: uint64(tex)}, backend.Arg{Kind: cuda.Int32, Bits: 1}, ptrArg(in), ptrArg(out))
	err = d.StreamSynchronize(s)
	require.Error(t, err)
	assert.ErrorContains(t, err, "not a live texture object")
}

func TestTexture1DLinearMaxWidth(t *testing.T) {
	_, d, _ := open(t)
	n, err := d.Texture1DLinearMaxWidth(cuda.Channels[float32](4))
	require.NoError(t, err)
	assert.Positive(t, n)
	_, err = d.Texture1DLinearMaxWidth(cuda.ChannelFormat{X: 12, Kind: cuda.ChannelFloat})
	requireCode(t, err, cudaerr.InvalidChannelDescriptor)
}

func TestCubeFace(t *testing.T) {
	for _, c := range []struct {
		x, y, z float64
		face    int
		u, v    float64
	}{
		{1, 0, 0, 0, 0.5, 0.5}, {-1, 0.5, 0, 1, 0.5, 0.25}, {0, 1, 0.5, 2, 0.5, 0.75},
		{0.5, -1, 0, 3, 0.75, 0.5}, {0, 0, 1, 4, 0.5, 0.5}, {0.5, 0, -1, 5, 0.25, 0.5},
	} {
		f, u, v := cubeFace(c.x, c.y, c.z)
		assert.Equal(t, []any{c.face, c.u, c.v}, []any{f, u, v}, "direction (%v, %v, %v)", c.x, c.y, c.z)
	}
}
