package textures_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testgpu"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
	"github.com/gpuactor/gpuactor/textures"
)

const imgW, imgH = 5, 4

// floatImage is texel (x, y) of the float texture: uneven steps, so that a wrong texel or
// weight shows.
func floatImage() []float32 {
	img := make([]float32, imgW*imgH)
	for y := 0; y < imgH; y++ {
		for x := 0; x < imgW; x++ {
			img[y*imgW+x] = float32(x*x) + 7*float32(y) + 0.25
		}
	}
	return img
}

// rgbaImage is texel (x, y) of the RGBA8 texture, packed little-endian (r lowest).
func rgbaImage() []uint32 {
	img := make([]uint32, imgW*imgH)
	for y := 0; y < imgH; y++ {
		for x := 0; x < imgW; x++ {
			r, g, b, a := uint32(40*x+3), uint32(60*y+10), uint32((x*y*37)%256), uint32(255-11*x-13*y)
			img[y*imgW+x] = r | g<<8 | b<<16 | a<<24
		}
	}
	return img
}

// shortImage is texel (x, y) of the signed 16-bit texture: both signs, both extremes.
func shortImage() []int16 {
	img := make([]int16, imgW*imgH)
	for i := range img {
		img[i] = int16(int32(i*i*997)%65536 - 32768)
	}
	img[0], img[1] = -32768, 32767
	return img
}

// volumeImage is texel (x, y, z) of the 4×3×2 float volume.
func volumeImage() []float32 {
	v := make([]float32, 4*3*2)
	for i := range v {
		x, y, z := i%4, i/4%3, i/12
		v[i] = float32(x*x+3*y) + 20*float32(z)
	}
	return v
}

// texelCoords are coordinates in texels: off-centre, on centres, past every edge, negative.
var texelCoords = []float32{
	0.3, 0.6, 1.7, 2.2, 4.9, 3.9, 2.5, 1.5, 3.1, 0.8, 0.5, 3.5,
	-0.4, 1.3, -3.2, -1.1, 5.6, 2.5, 9.1, 6.3, 2.2, -0.7, 1.4, 4.3, -6.6, 8.2,
}

// normCoords are texelCoords scaled to normalized coordinates, so they land in the same places.
func normCoords() []float32 {
	out := make([]float32, len(texelCoords))
	for i, c := range texelCoords {
		if i%2 == 0 {
			out[i] = c / imgW
		} else {
			out[i] = c / imgH
		}
	}
	return out
}

// samplingCase is one texture description the comparison samples with.
type samplingCase struct {
	name string
	desc textures.Desc
}

func samplingCases() []samplingCase {
	var cs []samplingCase
	for _, m := range []textures.AddressMode{textures.Wrap, textures.Clamp, textures.Mirror, textures.Border} {
		for _, f := range []textures.FilterMode{textures.Point, textures.Linear} {
			for _, norm := range []bool{false, true} {
				d := textures.Desc{Address: [3]textures.AddressMode{m, m, m}, Filter: f, Normalized: norm,
					Border: [4]float32{0.5, 0.25, 0.75, 1}}
				cs = append(cs, samplingCase{fmt.Sprintf("mode%d/filter%d/normalized=%v", m, f, norm), d})
			}
		}
	}
	return cs
}

// samplingResults are what every case fetched on one backend, by case and kernel.
type samplingResults map[string][]float32

// runSampling samples every case on the device opts open, with the CUDA kernels or their twins.
func runSampling(t *testing.T, opts []device.Option) samplingResults {
	ctx := testdev.Ctx(t)
	dev := testdev.Open(t, ctx, opts)
	mod, err := dev.Compile(ctx, device.Source{Name: "sampling.cu", Code: samplingSource, Sim: samplingSim})
	require.NoError(t, err)
	kernel := func(name string) *device.Kernel {
		k, err := mod.Kernel(ctx, name)
		require.NoError(t, err)
		return k
	}
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	defer s.Close(ctx)

	fimg, err := alloc.MallocPitch[float32](ctx, dev, imgW, imgH)
	require.NoError(t, err)
	defer fimg.Close(ctx)
	require.NoError(t, alloc.CopyToPitched(ctx, s, fimg, fimg.Whole(), floatImage()).Wait(ctx))
	cimg, err := alloc.MallocPitch[uint32](ctx, dev, imgW, imgH)
	require.NoError(t, err)
	defer cimg.Close(ctx)
	require.NoError(t, alloc.CopyToPitched(ctx, s, cimg, cimg.Whole(), rgbaImage()).Wait(ctx))
	simg, err := alloc.MallocPitch[int16](ctx, dev, imgW, imgH)
	require.NoError(t, err)
	defer simg.Close(ctx)
	require.NoError(t, alloc.CopyToPitched(ctx, s, simg, simg.Whole(), shortImage()).Wait(ctx))

	arr, err := alloc.NewArray(ctx, dev, cuda.Channels[float32](1), alloc.Extent{W: imgW, H: imgH})
	require.NoError(t, err)
	defer arr.Close(ctx)
	require.NoError(t, alloc.CopyToArray(ctx, s, arr, arr.Whole(), floatImage()).Wait(ctx))

	n := len(texelCoords) / 2
	xy, err := dev.MallocBytes(ctx, uint64(8*n))
	require.NoError(t, err)
	defer xy.Close(ctx)
	out, err := dev.MallocBytes(ctx, uint64(16*n))
	require.NoError(t, err)
	defer out.Close(ctx)

	res := samplingResults{}
	run := func(key string, tex *textures.Texture, k *device.Kernel, coords []float32, outFloats int) {
		require.NoError(t, streams.CopyToDevice(ctx, s, xy, coords).Wait(ctx))
		require.NoError(t, s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(32)}, tex, int32(n), xy, out).Wait(ctx))
		if outFloats == 0 { // uchar4: widen to floats for comparison
			got := make([]uint8, 4*n)
			require.NoError(t, streams.CopyFromDevice(ctx, s, got, out).Wait(ctx))
			for _, b := range got {
				res[key] = append(res[key], float32(b))
			}
			return
		}
		got := make([]float32, outFloats*n)
		require.NoError(t, streams.CopyFromDevice(ctx, s, got, out).Wait(ctx))
		res[key] = got
	}
	for _, c := range samplingCases() {
		coords := texelCoords
		if c.desc.Normalized {
			coords = normCoords()
		}
		ft, err := textures.New(ctx, dev, textures.FromPitched(fimg, cuda.Channels[float32](1)), c.desc)
		require.NoError(t, err, c.name)
		run(c.name+"/float", ft, kernel("sample_f1"), coords, 1)
		require.NoError(t, ft.Close(ctx))

		at, err := textures.New(ctx, dev, textures.FromArray(arr), c.desc)
		require.NoError(t, err, c.name)
		run(c.name+"/array-float", at, kernel("sample_f1"), coords, 1)
		require.NoError(t, at.Close(ctx))

		nd := c.desc
		nd.Read = textures.NormalizedFloat
		nt, err := textures.New(ctx, dev, textures.FromPitched(cimg, cuda.Channels[uint8](4)), nd)
		require.NoError(t, err, c.name)
		run(c.name+"/rgba8-normalized", nt, kernel("sample_f4"), coords, 4)
		require.NoError(t, nt.Close(ctx))

		st, err := textures.New(ctx, dev, textures.FromPitched(simg, cuda.Channels[int16](1)), nd)
		require.NoError(t, err, c.name)
		run(c.name+"/int16-normalized", st, kernel("sample_f1"), coords, 1)
		require.NoError(t, st.Close(ctx))

		nd.SRGB = true
		sr, err := textures.New(ctx, dev, textures.FromPitched(cimg, cuda.Channels[uint8](4)), nd)
		require.NoError(t, err, c.name)
		run(c.name+"/rgba8-srgb", sr, kernel("sample_f4"), coords, 4)
		require.NoError(t, sr.Close(ctx))

		if c.desc.Filter == textures.Point { // element reads of integers do not filter
			ed := c.desc
			ed.Border = [4]float32{} // an integer texture reads the colour's bits: zero is zero everywhere
			et, err := textures.New(ctx, dev, textures.FromPitched(cimg, cuda.Channels[uint8](4)), ed)
			require.NoError(t, err, c.name)
			run(c.name+"/rgba8-element", et, kernel("sample_u4"), coords, 0)
			require.NoError(t, et.Close(ctx))
		}
	}
	// tex3D over a 3D array: trilinear and point, clamped, bordered and wrapped.
	vol, err := alloc.NewArray(ctx, dev, cuda.Channels[float32](1), alloc.Extent{W: 4, H: 3, D: 2})
	require.NoError(t, err)
	defer vol.Close(ctx)
	require.NoError(t, alloc.CopyToArray(ctx, s, vol, vol.Whole(), volumeImage()).Wait(ctx))
	xyz := []float32{0.3, 0.4, 0.2, 1.5, 1.5, 0.5, 2.7, 0.9, 1.3, -0.6, 2.8, 1.9, 3.9, -1.2, 0.8, 1.2, 2.2, 5.1, 0.8, 1.1, 1.0}
	nv := len(xyz) / 3
	xyzBuf, err := dev.MallocBytes(ctx, uint64(4*len(xyz)))
	require.NoError(t, err)
	defer xyzBuf.Close(ctx)
	for _, c := range []samplingCase{
		{"3d/clamp-linear", textures.Desc{Address: [3]textures.AddressMode{textures.Clamp, textures.Clamp, textures.Clamp}, Filter: textures.Linear}},
		{"3d/border-point", textures.Desc{Address: [3]textures.AddressMode{textures.Border, textures.Border, textures.Border}, Border: [4]float32{-5}}},
		{"3d/border-linear", textures.Desc{Address: [3]textures.AddressMode{textures.Border, textures.Border, textures.Border}, Filter: textures.Linear, Border: [4]float32{-5}}},
		{"3d/wrap-linear-normalized", textures.Desc{Filter: textures.Linear, Normalized: true}},
	} {
		coords := xyz
		if c.desc.Normalized {
			coords = make([]float32, len(xyz))
			for i, v := range xyz {
				coords[i] = v / float32([3]int{4, 3, 2}[i%3])
			}
		}
		tex, err := textures.New(ctx, dev, textures.FromArray(vol), c.desc)
		require.NoError(t, err, c.name)
		require.NoError(t, streams.CopyToDevice(ctx, s, xyzBuf, coords).Wait(ctx))
		require.NoError(t, s.Launch(ctx, kernel("sample_3d"), cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(32)}, tex, int32(nv), xyzBuf, out).Wait(ctx))
		got := make([]float32, nv)
		require.NoError(t, streams.CopyFromDevice(ctx, s, got, out).Wait(ctx))
		res[c.name+"/float"] = got
		require.NoError(t, tex.Close(ctx))
	}

	// tex1Dfetch over linear memory: indices -2 .. n-3, the first two and the last past the end.
	lin, err := dev.MallocBytes(ctx, uint64(4*(n-3)))
	require.NoError(t, err)
	defer lin.Close(ctx)
	require.NoError(t, streams.CopyToDevice(ctx, s, lin, floatImage()[:n-3]).Wait(ctx))
	lt, err := textures.New(ctx, dev, textures.FromLinear(lin, cuda.Channels[float32](1)), textures.Desc{})
	require.NoError(t, err)
	require.NoError(t, s.Launch(ctx, kernel("fetch_f1"), cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(32)}, lt, int32(n), out).Wait(ctx))
	got := make([]float32, n)
	require.NoError(t, streams.CopyFromDevice(ctx, s, got, out).Wait(ctx))
	res["linear-fetch"] = got
	require.NoError(t, lt.Close(ctx))
	return res
}

// TestSamplingSimulatorMatchesGPU runs one sampling kernel on the simulator (its Go twin) and,
// when there is a GPU, on it, over the same images and coordinates, in every address mode, both
// filters, both coordinate kinds and both read modes: point sampling must agree exactly (to
// the float conversion's rounding for normalized reads, and the texture unit's own sRGB curve),
// linear within the error of the hardware's 8-bit-fraction weights.
func TestSamplingSimulatorMatchesGPU(t *testing.T) {
	simRes := runSampling(t, []device.Option{device.WithSimulator(sim.New()), device.WithKernelCache(t.TempDir())})

	// The simulator on its own: spot checks against hand-computed texels.
	img := floatImage()
	at := func(x, y int) float32 { return img[y*imgW+x] }
	clampPoint := simRes["mode1/filter0/normalized=false/float"]
	assert.Equal(t, at(0, 0), clampPoint[0], "(0.3, 0.6)")
	assert.Equal(t, at(1, 2), clampPoint[1], "(1.7, 2.2)")
	assert.Equal(t, at(0, 0), clampPoint[7], "(-3.2, -1.1) clamps to the corner")
	borderPoint := simRes["mode3/filter0/normalized=false/float"]
	assert.Equal(t, float32(0.5), borderPoint[6], "(-0.4, 1.3) is outside: the border colour")
	assert.Equal(t, float32(1+3), simRes["3d/clamp-linear/float"][1], "(1.5, 1.5, 0.5) is texel (1, 1, 0)'s centre")
	assert.Equal(t, float32(0), simRes["3d/clamp-linear/float"][0], "(0.3, 0.4, 0.2) is below every first centre: texel (0, 0, 0)")
	assert.Equal(t, float32(-5), simRes["3d/border-point/float"][3], "outside in x: the border")
	for key, v := range simRes {
		if strings.HasSuffix(key, "/array-float") {
			assert.Equal(t, simRes[strings.TrimSuffix(key, "array-float")+"float"], v, "%s: an array samples as pitched memory does", key)
		}
	}
	wrapNorm := simRes["mode0/filter0/normalized=true/float"]
	assert.Equal(t, at(4, 1), wrapNorm[6], "(-0.4, 1.3) wraps to x = 4")
	linClamp := simRes["mode1/filter1/normalized=false/float"]
	assert.Equal(t, at(2, 1), linClamp[3], "a texel centre gives the texel")
	assert.Equal(t, float32(-1), simRes["mode1/filter0/normalized=false/int16-normalized"][0], "-32768 reads as -1, not below")
	srgb := simRes["mode1/filter0/normalized=false/rgba8-srgb"][:4]
	assert.InDelta(t, 3.0/255/12.92, srgb[0], 1e-7, "sRGB: a dark red is linear below 0.04045")
	assert.Equal(t, float32(1), srgb[3], "alpha is not converted")
	assert.Equal(t, []float32{0, 0, img[0], img[1], img[2]}, simRes["linear-fetch"][:5], "tex1Dfetch: zero before the start")
	assert.Equal(t, float32(0), simRes["linear-fetch"][len(simRes["linear-fetch"])-1], "and past the end")

	t.Run("cuda", func(t *testing.T) {
		testgpu.Need(t, testdev.GPU(), "the cuda backend sees no device")
		gpuRes := runSampling(t, []device.Option{device.WithBackend(device.BackendCUDA), device.WithKernelCache(t.TempDir())})
		fimg := floatImage()
		span := func(key string) float64 {
			if strings.HasSuffix(key, "float") {
				lo, hi := math.Inf(1), math.Inf(-1)
				vals := fimg
				if strings.HasPrefix(key, "3d/") {
					vals = volumeImage()
					lo = -5 // the border colour
				}
				for _, v := range vals {
					lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
				}
				return math.Max(hi-lo, 0.75) // the border colour is in range too
			}
			if strings.HasSuffix(key, "/int16-normalized") {
				return 2 // [-1, 1]
			}
			return 1 // normalized RGBA8
		}
		for key, want := range simRes {
			got := gpuRes[key]
			require.Len(t, got, len(want), key)
			for i := range want {
				switch {
				case strings.Contains(key, "filter1") || strings.Contains(key, "-linear"):
					// Each dimension's weight off by at most 1/256 of the texels' span.
					dims := 2.0
					if strings.HasPrefix(key, "3d/") {
						dims = 3
					}
					assert.InDelta(t, want[i], got[i], dims*span(key)/256+1e-5, "%s [%d]", key, i)
				case strings.HasSuffix(key, "/rgba8-srgb"):
					// The texture unit's sRGB curve is its own approximation of the standard's.
					assert.InDelta(t, want[i], got[i], 2e-3, "%s [%d]", key, i)
				case strings.HasSuffix(key, "-normalized"): // v/255 or v/32767 rounded to a float
					assert.InDelta(t, want[i], got[i], 1e-6, "%s [%d]", key, i)
				default:
					assert.Equal(t, want[i], got[i], "%s [%d]", key, i)
				}
			}
		}
	})
}
