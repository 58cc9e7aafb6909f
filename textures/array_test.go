package textures_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testfix"
	"github.com/gpuactor/gpuactor/streams"
	"github.com/gpuactor/gpuactor/textures"
)

// A kernel writes an array through a surface; a texture over the same array, and a copy of
// it, then read what it wrote.
func TestSurfaceWritesWhatTextureReads(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *testfix.Fixture) {
		ctx, dev := f.Ctx, f.Dev
		s := f.Stream(t)
		const w, h = 8, 4
		arr, err := alloc.NewArray(ctx, dev, cuda.Channels[float32](1), alloc.Extent{W: w, H: h}, alloc.SurfaceLoadStore())
		require.NoError(t, err)
		defer arr.Close(ctx)
		surf, err := textures.NewSurface(ctx, dev, textures.FromArray(arr))
		require.NoError(t, err)
		r, err := surf.Resource(ctx)
		require.NoError(t, err)
		assert.Equal(t, textures.ArrayResource, r.Type)
		require.NoError(t, s.Launch(ctx, f.Kernel(t, "surf_fill"), cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(w, h)}, surf, int32(w), int32(h)).Wait(ctx))

		got := make([]float32, w*h)
		require.NoError(t, alloc.CopyFromArray(ctx, s, got, arr, arr.Whole()).Wait(ctx))
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				require.Equal(t, float32(x+100*y), got[y*w+x], "(%d, %d)", x, y)
			}
		}

		tex, err := textures.New(ctx, dev, textures.FromArray(arr), textures.Desc{Filter: textures.Linear})
		require.NoError(t, err)
		xy, err := dev.MallocBytes(ctx, 16)
		require.NoError(t, err)
		out, err := dev.MallocBytes(ctx, 8)
		require.NoError(t, err)
		require.NoError(t, streams.CopyToDevice(ctx, s, xy, []float32{3.5, 2.5, 4.0, 1.0}).Wait(ctx))
		require.NoError(t, s.Launch(ctx, f.Kernel(t, "sample_f1"), cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(2)}, tex, int32(2), xy, out).Wait(ctx))
		res := make([]float32, 2)
		require.NoError(t, streams.CopyFromDevice(ctx, s, res, out).Wait(ctx))
		assert.Equal(t, []float32{203, 53.5}, res, "a texel centre, then half way between four")

		// The array closed under the texture and the surface: launches with them are refused.
		require.NoError(t, surf.Close(ctx))
		require.NoError(t, arr.Close(ctx))
		err = s.Launch(ctx, f.Kernel(t, "sample_f1"), cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(2)}, tex, int32(2), xy, out).Wait(ctx)
		require.ErrorIs(t, err, device.ErrClosed)
		assert.ErrorContains(t, err, "array that was closed")
		require.NoError(t, tex.Close(ctx))
		_, err = textures.New(ctx, dev, textures.FromArray(arr), textures.Desc{})
		require.ErrorIs(t, err, device.ErrClosed, "a texture over a freed array")
		testdev.RequireUsable(t, dev)
	})
}

func TestSurfaceBadInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *testfix.Fixture) {
		ctx, dev := f.Ctx, f.Dev
		plain, err := alloc.NewArray(ctx, dev, cuda.Channels[uint8](4), alloc.Extent{W: 4, H: 4})
		require.NoError(t, err)
		defer plain.Close(ctx)
		_, err = textures.NewSurface(ctx, dev, textures.FromArray(plain))
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		assert.ErrorContains(t, err, "SurfaceLoadStore")

		_, err = textures.NewSurface(ctx, dev, textures.FromLinear(f.Buffer(t, 64), cuda.Channels[float32](1)))
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		assert.ErrorContains(t, err, "not linear memory")
		testdev.RequireUsable(t, dev)
	})
}

// simpleLayeredTexture's transform on a small layered array: each layer's texels read back
// through tex2DLayered with normalized coordinates, linear filtering and wrap, at texel centres.
func TestLayeredTexture(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *testfix.Fixture) {
		ctx, dev := f.Ctx, f.Dev
		s := f.Stream(t)
		const w, h, layers = 8, 8, 3
		arr, err := alloc.NewArray(ctx, dev, cuda.Channels[float32](1), alloc.Extent{W: w, H: h, D: layers}, alloc.Layered())
		require.NoError(t, err)
		defer arr.Close(ctx)
		in := make([]float32, w*h*layers)
		for i := range in {
			in[i] = float32(i % (w * h))
		}
		require.NoError(t, alloc.CopyToArray(ctx, s, arr, arr.Whole(), in).Wait(ctx))
		tex, err := textures.New(ctx, dev, textures.FromArray(arr), textures.Desc{Normalized: true, Filter: textures.Linear})
		require.NoError(t, err)
		defer tex.Close(ctx)
		out, err := dev.MallocBytes(ctx, 4*w*h*layers)
		require.NoError(t, err)
		k := f.Kernel(t, "transform_layered")
		for l := 0; l < layers; l++ {
			require.NoError(t, s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(w, h)}, out, int32(w), int32(h), int32(l), tex).Wait(ctx))
		}
		got := make([]float32, w*h*layers)
		require.NoError(t, streams.CopyFromDevice(ctx, s, got, out).Wait(ctx))
		for i := range got {
			require.InDelta(t, -in[i]+float32(i/(w*h)), got[i], 5e-3, "element %d", i)
		}
	})
}

// A view over layers 1..2 of a layered array: its layer 0 is the array's layer 1. The view keeps the array's format: CUDA defines a different
// non-block-compressed view format only as a reinterpretation of the array's opaque layout,
// and an H200 reading uint32 texels through a uchar4 view gave bytes that were none of the
// texels', so no test can ask for those.
func TestView(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *testfix.Fixture) {
		ctx, dev := f.Ctx, f.Dev
		s := f.Stream(t)
		arr, err := alloc.NewArray(ctx, dev, cuda.Channels[uint32](1), alloc.Extent{W: 4, H: 2, D: 3}, alloc.Layered())
		require.NoError(t, err)
		defer arr.Close(ctx)
		texels := make([]uint32, 4*2*3)
		for i := range texels {
			texels[i] = uint32(0x100*(i/8) + i%8) // layer l, texel i: 0x100·l + i
		}
		require.NoError(t, alloc.CopyToArray(ctx, s, arr, arr.Whole(), texels).Wait(ctx))
		view := textures.View{Format: textures.ViewUnsignedInt1, Width: 4, Height: 2, Depth: 3, FirstLayer: 1, LastLayer: 2}
		tex, err := textures.New(ctx, dev, textures.FromArray(arr), textures.Desc{}, textures.WithView(view))
		require.NoError(t, err)
		defer tex.Close(ctx)
		got, err := tex.View(ctx)
		require.NoError(t, err)
		assert.Equal(t, view, got)

		xyl, err := dev.MallocBytes(ctx, 4*12)
		require.NoError(t, err)
		out, err := dev.MallocBytes(ctx, 4*4)
		require.NoError(t, err)
		// (x, y, layer): texel (1, 0) of view layer 0, (2, 1) and (3, 1) of view layer 1, (0, 0)
		// of view layer 0.
		require.NoError(t, streams.CopyToDevice(ctx, s, xyl, []float32{1.5, 0.5, 0, 2.5, 1.5, 1, 3.5, 1.5, 1, 0.5, 0.5, 0}).Wait(ctx))
		require.NoError(t, s.Launch(ctx, f.Kernel(t, "sample_layered_u1"), cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(4)}, tex, int32(4), xyl, out).Wait(ctx))
		res := make([]uint32, 4)
		require.NoError(t, streams.CopyFromDevice(ctx, s, res, out).Wait(ctx))
		assert.Equal(t, []uint32{0x101, 0x206, 0x207, 0x100}, res)
		testdev.RequireUsable(t, dev)
	})
}

// A mipmapped array read at the level a fetch names: point between levels picks the nearest,
// linear blends the two.
func TestMipmappedTexture(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *testfix.Fixture) {
		ctx, dev := f.Ctx, f.Dev
		s := f.Stream(t)
		m, err := alloc.NewMipmappedArray(ctx, dev, cuda.Channels[float32](1), alloc.Extent{W: 8, H: 8}, 3)
		require.NoError(t, err)
		defer m.Close(ctx)
		for l := 0; l < 3; l++ {
			lv, err := m.Level(ctx, l)
			require.NoError(t, err)
			n := (8 >> l) * (8 >> l)
			vals := make([]float32, n)
			for i := range vals {
				vals[i] = float32(100 * (l + 1)) // every texel of level l: 100(l+1)
			}
			require.NoError(t, alloc.CopyToArray(ctx, s, lv, lv.Whole(), vals).Wait(ctx))
		}
		xyl, err := dev.MallocBytes(ctx, 48)
		require.NoError(t, err)
		out, err := dev.MallocBytes(ctx, 16)
		require.NoError(t, err)
		require.NoError(t, streams.CopyToDevice(ctx, s, xyl, []float32{0.3, 0.6, 0, 0.3, 0.6, 1, 0.3, 0.6, 2, 0.3, 0.6, 0.5}).Wait(ctx))
		for _, c := range []struct {
			filter textures.FilterMode
			want   []float32
		}{
			{textures.Point, []float32{100, 200, 300, 0}},
			{textures.Linear, []float32{100, 200, 300, 150}},
		} {
			desc := textures.Desc{Normalized: true, Address: [3]textures.AddressMode{textures.Clamp, textures.Clamp},
				MipmapFilter: c.filter, MaxMipmapLevelClamp: 2}
			tex, err := textures.New(ctx, dev, textures.FromMipmapped(m), desc)
			require.NoError(t, err)
			require.NoError(t, s.Launch(ctx, f.Kernel(t, "sample_lod"), cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(4)}, tex, int32(4), xyl, out).Wait(ctx))
			got := make([]float32, 4)
			require.NoError(t, streams.CopyFromDevice(ctx, s, got, out).Wait(ctx))
			assert.Equal(t, c.want[:3], got[:3], "whole levels, filter %d", c.filter)
			if c.filter == textures.Linear {
				assert.InDelta(t, 150, got[3], 100.0/256+1e-4, "half way between levels 0 and 1")
			} else {
				assert.Contains(t, []float32{100, 200}, got[3], "level 0.5 rounds to a neighbour")
			}
			require.NoError(t, tex.Close(ctx))
		}
		// Unnormalized coordinates are allowed too; every texel of a level has its value, so
		// where (0.3, 0.6) lands in the level does not matter.
		tex, err := textures.New(ctx, dev, textures.FromMipmapped(m), textures.Desc{MaxMipmapLevelClamp: 2})
		require.NoError(t, err, "a mipmapped texture without normalized coordinates")
		require.NoError(t, s.Launch(ctx, f.Kernel(t, "sample_lod"), cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(4)}, tex, int32(4), xyl, out).Wait(ctx))
		got := make([]float32, 4)
		require.NoError(t, streams.CopyFromDevice(ctx, s, got, out).Wait(ctx))
		assert.Equal(t, []float32{100, 200, 300}, got[:3], "unnormalized, whole levels")
		require.NoError(t, tex.Close(ctx))
		testdev.RequireUsable(t, dev)
	})
}
