package textures_test

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/isolate"
	"github.com/gpuactor/gpuactor/streams"
	"github.com/gpuactor/gpuactor/textures"
)

// On an isolated device the descriptors cross to the worker as plain structs and the objects
// come back as handles: sampling there gives what it gives in process.
func TestIsolatedDevice(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := testdev.Open(t, ctx, append(opts, device.Isolated(isolate.WithStderr(io.Discard))))
		mod, err := dev.Compile(ctx, device.Source{Name: "sampling.cu", Code: samplingSource, Sim: samplingSim})
		require.NoError(t, err)
		k, err := mod.Kernel(ctx, "sample_f1")
		require.NoError(t, err)
		s, err := streams.New(ctx, dev)
		require.NoError(t, err)
		defer s.Close(ctx)
		img, err := alloc.MallocPitch[float32](ctx, dev, imgW, imgH)
		require.NoError(t, err)
		defer img.Close(ctx)
		require.NoError(t, alloc.CopyToPitched(ctx, s, img, img.Whole(), floatImage()).Wait(ctx))
		desc := textures.Desc{Address: [3]textures.AddressMode{textures.Border, textures.Clamp}, Border: [4]float32{-1}}
		tex, err := textures.New(ctx, dev, textures.FromPitched(img, cuda.Channels[float32](1)), desc)
		require.NoError(t, err)
		defer tex.Close(ctx)
		got, err := tex.Desc(ctx)
		require.NoError(t, err)
		assert.Equal(t, desc, got)

		xy, err := dev.MallocBytes(ctx, 32)
		require.NoError(t, err)
		out, err := dev.MallocBytes(ctx, 16)
		require.NoError(t, err)
		require.NoError(t, streams.CopyToDevice(ctx, s, xy, []float32{1.5, 2.5, -0.5, 1.5, 3.2, 9.0, 4.5, 0.5}).Wait(ctx))
		require.NoError(t, s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(4)}, tex, int32(4), xy, out).Wait(ctx))
		res := make([]float32, 4)
		require.NoError(t, streams.CopyFromDevice(ctx, s, res, out).Wait(ctx))
		want := floatImage()
		assert.Equal(t, []float32{want[2*imgW+1], -1, want[3*imgW+3], want[4]}, res)

		// A surface over an array: its handle crosses to the worker, whose kernel writes the
		// array there.
		arr, err := alloc.NewArray(ctx, dev, cuda.Channels[float32](1), alloc.Extent{W: 4, H: 2}, alloc.SurfaceLoadStore())
		require.NoError(t, err)
		defer arr.Close(ctx)
		surf, err := textures.NewSurface(ctx, dev, textures.FromArray(arr))
		require.NoError(t, err)
		defer surf.Close(ctx)
		fill, err := mod.Kernel(ctx, "surf_fill")
		require.NoError(t, err)
		require.NoError(t, s.Launch(ctx, fill, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(4, 2)}, surf, int32(4), int32(2)).Wait(ctx))
		back := make([]float32, 8)
		require.NoError(t, alloc.CopyFromArray(ctx, s, back, arr, arr.Whole()).Wait(ctx))
		assert.Equal(t, []float32{0, 1, 2, 3, 100, 101, 102, 103}, back)
	})
}
