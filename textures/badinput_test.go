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

func eachBackend(t *testing.T, fn func(t *testing.T, f *testfix.Fixture)) {
	testfix.EachBackend(t, device.Source{Name: "sampling.cu", Code: samplingSource, Sim: samplingSim}, fn)
}

func TestBadInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *testfix.Fixture) {
		ctx, dev := f.Ctx, f.Dev
		buf := f.Buffer(t, 4096)
		f32 := cuda.Channels[float32](1)

		_, err := textures.New(ctx, dev, textures.FromLinear(buf, cuda.ChannelFormat{X: 8, Y: 8, Z: 8, Kind: cuda.ChannelUnsigned}), textures.Desc{})
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		assert.ErrorContains(t, err, "3 channels", "an unsupported channel format")

		_, err = textures.New(ctx, dev, textures.FromLinear(buf.Slice(4, 64), f32), textures.Desc{})
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		assert.ErrorContains(t, err, "texture alignment")

		_, err = textures.New(ctx, dev, textures.FromLinear(buf, f32), textures.Desc{Filter: 7})
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		assert.ErrorContains(t, err, "Desc.Filter")
		_, err = textures.New(ctx, dev, textures.FromLinear(buf, f32), textures.Desc{Address: [3]textures.AddressMode{0, 9, 0}})
		assert.ErrorContains(t, err, "Desc.Address[1]")

		_, err = textures.New(ctx, dev, textures.Resource{}, textures.Desc{})
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, err = textures.New(ctx, dev, textures.FromLinear(nil, f32), textures.Desc{})
		require.ErrorIs(t, err, device.ErrInvalidArgument)

		p, err := alloc.MallocPitch[uint32](ctx, dev, 7, 3)
		require.NoError(t, err)
		defer p.Close(ctx)
		_, err = textures.New(ctx, dev, textures.FromPitched(p, cuda.Channels[uint16](1)), textures.Desc{})
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		assert.ErrorContains(t, err, "2-byte elements, the array's are 4 bytes")

		max, err := textures.MaxLinearWidth(ctx, dev, cuda.Channels[uint8](1))
		require.NoError(t, err)
		assert.Positive(t, max)
		_, err = textures.MaxLinearWidth(ctx, dev, cuda.ChannelFormat{X: 24, Kind: cuda.ChannelFloat})
		require.ErrorIs(t, err, device.ErrInvalidArgument)

		// Wider than the device allows: linear memory (per format) and pitched rows.
		big, err := dev.MallocBytes(ctx, max+512)
		require.NoError(t, err)
		defer big.Close(ctx)
		_, err = textures.New(ctx, dev, textures.FromLinear(big, cuda.Channels[uint8](1)), textures.Desc{})
		require.ErrorIs(t, err, device.ErrOutOfRange)
		assert.ErrorContains(t, err, "for a texture over linear memory")
		edge, err := textures.New(ctx, dev, textures.FromLinear(big.Slice(0, max), cuda.Channels[uint8](1)), textures.Desc{})
		require.NoError(t, err, "exactly the limit")
		require.NoError(t, edge.Close(ctx))
		wide, err := alloc.MallocPitch[uint8](ctx, dev, 1<<20, 1)
		require.NoError(t, err)
		defer wide.Close(ctx)
		_, err = textures.New(ctx, dev, textures.FromPitched(wide, cuda.Channels[uint8](1)), textures.Desc{})
		require.ErrorIs(t, err, device.ErrOutOfRange)
		assert.ErrorContains(t, err, "for a pitch2D texture")

		// A texture over memory already closed.
		gone := f.Buffer(t, 1024)
		require.NoError(t, gone.Close(ctx))
		_, err = textures.New(ctx, dev, textures.FromLinear(gone, f32), textures.Desc{})
		require.ErrorIs(t, err, device.ErrClosed)

		testdev.RequireUsable(t, dev)
	})
}

func TestLifetimeAndKernelArguments(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *testfix.Fixture) {
		ctx, dev := f.Ctx, f.Dev
		s := f.Stream(t)
		k := f.Kernel(t, "fetch_f1")
		lin := f.Buffer(t, 64)
		out := f.Buffer(t, 64)
		require.NoError(t, streams.CopyToDevice(ctx, s, lin, []float32{1, 2, 3, 4, 5}).Wait(ctx))
		tex, err := textures.New(ctx, dev, textures.FromLinear(lin.Slice(0, 20), cuda.Channels[float32](1)), textures.Desc{})
		require.NoError(t, err)
		cfg := cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(8)}

		// The *Texture and its Object are both accepted; a bare integer is not a texture.
		require.NoError(t, s.Launch(ctx, k, cfg, tex, int32(8), out).Wait(ctx))
		got := make([]float32, 8)
		require.NoError(t, streams.CopyFromDevice(ctx, s, got, out).Wait(ctx))
		assert.Equal(t, []float32{0, 0, 1, 2, 3, 4, 5, 0}, got)
		require.NoError(t, s.Launch(ctx, k, cfg, tex.Object(), int32(8), out).Wait(ctx))
		err = s.Launch(ctx, k, cfg, uint64(tex.Object()), int32(8), out).Wait(ctx)
		require.ErrorIs(t, err, device.ErrKernelArgs)
		assert.ErrorContains(t, err, "texture object")

		r, err := tex.Resource(ctx)
		require.NoError(t, err)
		base, err := lin.DevicePtr(ctx)
		require.NoError(t, err)
		assert.Equal(t, textures.ResourceDesc{Type: textures.LinearResource, Ptr: base, Format: cuda.Channels[float32](1), Size: 20}, r)
		d, err := tex.Desc(ctx)
		require.NoError(t, err)
		assert.Equal(t, textures.Desc{}, d)

		// Closing the memory first: the texture refuses launches, naming the buffer.
		require.NoError(t, lin.Close(ctx))
		err = s.Launch(ctx, k, cfg, tex, int32(8), out).Wait(ctx)
		require.ErrorIs(t, err, device.ErrClosed)
		assert.ErrorContains(t, err, "which was closed")

		require.NoError(t, tex.Close(ctx))
		assert.True(t, tex.Closed())
		require.ErrorIs(t, tex.Close(ctx), device.ErrClosed)
		err = s.Launch(ctx, k, cfg, tex, int32(8), out).Wait(ctx)
		require.ErrorIs(t, err, device.ErrClosed)
		_, err = tex.Desc(ctx)
		require.ErrorIs(t, err, device.ErrClosed)
		testdev.RequireUsable(t, dev)
	})
}

func TestDescriptorsRoundTrip(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *testfix.Fixture) {
		ctx, dev := f.Ctx, f.Dev
		p, err := alloc.MallocPitch[[4]uint8](ctx, dev, 9, 5)
		require.NoError(t, err)
		defer p.Close(ctx)
		desc := textures.Desc{Address: [3]textures.AddressMode{textures.Border, textures.Mirror, textures.Clamp},
			Filter: textures.Linear, Read: textures.NormalizedFloat, Normalized: true, SRGB: true,
			Border: [4]float32{0.1, 0.2, 0.3, 0.4}, MaxAnisotropy: 1}
		tex, err := textures.New(ctx, dev, textures.FromPitched(p, cuda.Channels[uint8](4)), desc)
		require.NoError(t, err)
		defer tex.Close(ctx)
		got, err := tex.Desc(ctx)
		require.NoError(t, err)
		assert.Equal(t, desc, got)
		r, err := tex.Resource(ctx)
		require.NoError(t, err)
		assert.Equal(t, textures.Pitch2DResource, r.Type)
		assert.Equal(t, []uint64{9, 5, p.Pitch()}, []uint64{r.Width, r.Height, r.Pitch})
		v, err := tex.View(ctx)
		require.NoError(t, err)
		assert.Equal(t, textures.View{}, v, "no view")
		assert.Same(t, dev, tex.Device())
	})
}
