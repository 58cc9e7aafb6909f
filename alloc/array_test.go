package alloc_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// Every shape of array takes data from a Go slice, passes it array → array → pitched memory
// → device memory → host, and gives back the same elements.
func TestArrayRoundTripsEveryShape(t *testing.T) {
	cases := []struct {
		name string
		ext  alloc.Extent
		opts []alloc.ArrayOption
	}{
		{"1D", alloc.Extent{W: 33}, nil},
		{"2D", alloc.Extent{W: 17, H: 5}, []alloc.ArrayOption{alloc.SurfaceLoadStore(), alloc.TextureGather()}},
		{"3D", alloc.Extent{W: 9, H: 4, D: 3}, nil},
		{"layered1D", alloc.Extent{W: 10, D: 3}, []alloc.ArrayOption{alloc.Layered()}},
		{"layered2D", alloc.Extent{W: 7, H: 3, D: 4}, []alloc.ArrayOption{alloc.Layered(), alloc.SurfaceLoadStore()}},
		{"cubemap", alloc.Extent{W: 4, H: 4, D: 6}, []alloc.ArrayOption{alloc.Cubemap()}},
		{"layeredCubemap", alloc.Extent{W: 4, H: 4, D: 12}, []alloc.ArrayOption{alloc.Cubemap(), alloc.Layered()}},
	}
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := streams.Default(f.Dev)
		format := cuda.Channels[float32](1)
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				a, err := alloc.NewArray(f.Ctx, f.Dev, format, c.ext, c.opts...)
				require.NoError(t, err)
				defer func() { require.NoError(t, a.Close(f.Ctx)) }()
				assert.Equal(t, c.ext, a.Extent())
				assert.Equal(t, format, a.Format())
				info, err := a.Info(f.Ctx)
				require.NoError(t, err)
				assert.Equal(t, alloc.ArrayInfo{Format: format, Extent: c.ext, Flags: a.Flags()}, info)
				got, err := a.ChannelFormat(f.Ctx)
				require.NoError(t, err)
				assert.Equal(t, format, got)

				whole := a.Whole()
				in := seq(whole.W * whole.H * whole.D)
				require.NoError(t, alloc.CopyToArray(f.Ctx, s, a, whole, in).Wait(f.Ctx))
				b, err := alloc.NewArray(f.Ctx, f.Dev, format, c.ext, c.opts...)
				require.NoError(t, err)
				defer func() { require.NoError(t, b.Close(f.Ctx)) }()
				require.NoError(t, alloc.CopyArray(f.Ctx, s, b, alloc.Pos{}, a, whole).Wait(f.Ctx))
				p, err := alloc.Malloc3D[float32](f.Ctx, f.Dev, whole.W, whole.H, whole.D)
				require.NoError(t, err)
				defer func() { require.NoError(t, p.Close(f.Ctx)) }()
				require.NoError(t, alloc.CopyArrayToPitched(f.Ctx, s, p, alloc.Pos{}, b, whole).Wait(f.Ctx))
				c2, err := alloc.NewArray(f.Ctx, f.Dev, format, c.ext, c.opts...)
				require.NoError(t, err)
				defer func() { require.NoError(t, c2.Close(f.Ctx)) }()
				require.NoError(t, alloc.CopyPitchedToArray(f.Ctx, s, c2, whole, p, alloc.Pos{}).Wait(f.Ctx))
				buf, err := f.Dev.MallocBytes(f.Ctx, uint64(len(in))*4)
				require.NoError(t, err)
				defer func() { require.NoError(t, buf.Close(f.Ctx)) }()
				require.NoError(t, alloc.CopyArrayToDevice(f.Ctx, s, buf, c2, whole).Wait(f.Ctx))
				out := make([]float32, len(in))
				testdev.Read(t, f.Ctx, out, buf)
				assert.Equal(t, in, out)
				clear(out)
				require.NoError(t, alloc.CopyFromArray(f.Ctx, s, out, c2, whole).Wait(f.Ctx))
				assert.Equal(t, in, out)
			})
		}
	})
}

// Sub-boxes land where they should and nowhere else, through every kind of copy.
func TestArraySubBoxes(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := streams.Default(f.Dev)
		const w, h, d = 6, 5, 4
		a, err := alloc.NewArray(f.Ctx, f.Dev, cuda.Channels[uint8](4), alloc.Extent{W: w, H: h, D: d})
		require.NoError(t, err)
		defer func() { require.NoError(t, a.Close(f.Ctx)) }()
		// RGBA8 elements filled channel by channel from a []uint8.
		zero := make([]uint8, w*h*d*4)
		require.NoError(t, alloc.CopyToArray(f.Ctx, s, a, a.Whole(), zero).Wait(f.Ctx))
		box := alloc.Box{Pos: alloc.Pos{X: 1, Y: 2, Z: 1}, W: 3, H: 2, D: 2}
		vals := make([]uint8, 3*2*2*4)
		for i := range vals {
			vals[i] = uint8(i + 1)
		}
		require.NoError(t, alloc.CopyToArray(f.Ctx, s, a, box, vals).Wait(f.Ctx))
		// A 2D box from device memory (cudaMemcpy2DToArrayAsync) in slice 3.
		row := make([]uint32, 2*2)
		for i := range row {
			row[i] = 0xa0a0a0a0 + uint32(i)
		}
		dm, err := f.Dev.MallocBytes(f.Ctx, 16)
		require.NoError(t, err)
		defer func() { require.NoError(t, dm.Close(f.Ctx)) }()
		testdev.Write(t, f.Ctx, dm, row)
		box2 := alloc.Box{Pos: alloc.Pos{X: 4, Y: 3, Z: 3}, W: 2, H: 2}
		require.NoError(t, alloc.CopyDeviceToArray(f.Ctx, s, a, box2, dm).Wait(f.Ctx))

		got := make([]uint32, w*h*d)
		require.NoError(t, alloc.CopyFromArray(f.Ctx, s, got, a, a.Whole()).Wait(f.Ctx))
		want := make([]uint32, w*h*d)
		for z := range 2 {
			for y := range 2 {
				for x := range 3 {
					i := ((z*2+y)*3 + x) * 4
					want[((1+z)*h+2+y)*w+1+x] = uint32(vals[i]) | uint32(vals[i+1])<<8 | uint32(vals[i+2])<<16 | uint32(vals[i+3])<<24
				}
			}
		}
		for y := range 2 {
			for x := range 2 {
				want[(3*h+3+y)*w+4+x] = row[y*2+x]
			}
		}
		assert.Equal(t, want, got)

		// The same 2D box back out through cudaMemcpy2DFromArrayAsync, and a sub-box of
		// another array through the pitched path.
		back, err := f.Dev.MallocBytes(f.Ctx, 16)
		require.NoError(t, err)
		defer func() { require.NoError(t, back.Close(f.Ctx)) }()
		require.NoError(t, alloc.CopyArrayToDevice(f.Ctx, s, back, a, box2).Wait(f.Ctx))
		out := make([]uint32, 4)
		testdev.Read(t, f.Ctx, out, back)
		assert.Equal(t, row, out)

		p, err := alloc.Malloc3D[uint32](f.Ctx, f.Dev, 4, 4, 2)
		require.NoError(t, err)
		defer func() { require.NoError(t, p.Close(f.Ctx)) }()
		require.NoError(t, alloc.MemsetPitched(f.Ctx, s, p, p.Whole(), 0).Wait(f.Ctx))
		require.NoError(t, alloc.CopyArrayToPitched(f.Ctx, s, p, alloc.Pos{X: 1, Y: 1, Z: 1}, a, alloc.Box{Pos: alloc.Pos{X: 4, Y: 3, Z: 3}, W: 2, H: 2}).Wait(f.Ctx))
		pg := make([]uint32, 4*4*2)
		require.NoError(t, alloc.CopyFromPitched(f.Ctx, s, pg, p, p.Whole()).Wait(f.Ctx))
		pw := make([]uint32, 4*4*2)
		pw[16+1*4+1], pw[16+1*4+2], pw[16+2*4+1], pw[16+2*4+2] = row[0], row[1], row[2], row[3]
		assert.Equal(t, pw, pg)
	})
}

func TestMipmappedArray(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := streams.Default(f.Dev)
		m, err := alloc.NewMipmappedArray(f.Ctx, f.Dev, cuda.Channels[float32](1), alloc.Extent{W: 16, H: 8}, 4)
		require.NoError(t, err)
		assert.Equal(t, 4, m.Levels())
		var exts []alloc.Extent
		for i := range 4 {
			l, err := m.Level(f.Ctx, i)
			require.NoError(t, err)
			again, err := m.Level(f.Ctx, i)
			require.NoError(t, err)
			assert.Same(t, l, again)
			exts = append(exts, l.Extent())
			in := seq(l.Whole().W * l.Whole().H)
			require.NoError(t, alloc.CopyToArray(f.Ctx, s, l, l.Whole(), in).Wait(f.Ctx))
			out := make([]float32, len(in))
			require.NoError(t, alloc.CopyFromArray(f.Ctx, s, out, l, l.Whole()).Wait(f.Ctx))
			assert.Equal(t, in, out, "level %d", i)
		}
		assert.Equal(t, []alloc.Extent{{W: 16, H: 8}, {W: 8, H: 4}, {W: 4, H: 2}, {W: 2, H: 1}}, exts)
		_, err = m.Level(f.Ctx, 4)
		require.ErrorIs(t, err, device.ErrOutOfRange)
		l0, err := m.Level(f.Ctx, 0)
		require.NoError(t, err)
		require.ErrorIs(t, l0.Close(f.Ctx), device.ErrInvalidArgument, "a level is freed with its mipmap")
		require.NoError(t, m.Close(f.Ctx))
		require.ErrorIs(t, alloc.CopyToArray(f.Ctx, s, l0, l0.Whole(), seq(16*8)).Wait(f.Ctx), device.ErrClosed)
		require.ErrorIs(t, m.Close(f.Ctx), device.ErrClosed)
		// More levels than halvings are clamped, as the runtime does: 16×8 halves to 1×1 in
		// 5 levels.
		more, err := alloc.NewMipmappedArray(f.Ctx, f.Dev, cuda.Channels[float32](1), alloc.Extent{W: 16, H: 8}, 9)
		require.NoError(t, err)
		defer func() { require.NoError(t, more.Close(f.Ctx)) }()
		require.Equal(t, 5, more.Levels())
		last, err := more.Level(f.Ctx, 4)
		require.NoError(t, err, "the last clamped level")
		t.Logf("level 4 of a 9-level 16×8 mipmap: %+v", last.Extent())
		assert.Equal(t, alloc.Extent{W: 1, H: 1}, last.Extent())
		require.NoError(t, alloc.CopyToArray(f.Ctx, s, last, last.Whole(), []float32{7}).Wait(f.Ctx))
		one := make([]float32, 1)
		require.NoError(t, alloc.CopyFromArray(f.Ctx, s, one, last, last.Whole()).Wait(f.Ctx))
		assert.Equal(t, []float32{7}, one)
		_, err = more.Level(f.Ctx, 5)
		require.ErrorIs(t, err, device.ErrOutOfRange)
	})
}

func TestArraySparseAndDeferredMapping(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		format := cuda.Channels[float32](1)
		plain, err := alloc.NewArray(f.Ctx, f.Dev, format, alloc.Extent{W: 64, H: 64})
		require.NoError(t, err)
		defer func() { require.NoError(t, plain.Close(f.Ctx)) }()
		_, err = plain.SparseProperties(f.Ctx)
		require.ErrorIs(t, err, cudaerr.InvalidValue)
		_, err = plain.MemoryRequirements(f.Ctx)
		require.ErrorIs(t, err, cudaerr.InvalidValue)
		_, err = plain.Plane(f.Ctx, 0)
		require.ErrorIs(t, err, cudaerr.InvalidValue, "single-planar arrays have no planes")

		sp, err := alloc.NewArray(f.Ctx, f.Dev, format, alloc.Extent{W: 512, H: 512}, alloc.Sparse())
		require.NoError(t, err)
		defer func() { require.NoError(t, sp.Close(f.Ctx)) }()
		props, err := sp.SparseProperties(f.Ctx)
		require.NoError(t, err)
		assert.Positive(t, props.TileWidth)
		assert.Positive(t, props.TileHeight)
		assert.Equal(t, 64<<10, props.TileWidth*props.TileHeight*props.TileDepth*4, "a tile is 64 KiB")

		df, err := alloc.NewArray(f.Ctx, f.Dev, format, alloc.Extent{W: 300, H: 200}, alloc.DeferredMapping())
		require.NoError(t, err)
		defer func() { require.NoError(t, df.Close(f.Ctx)) }()
		req, err := df.MemoryRequirements(f.Ctx)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, req.Size, uint64(300*200*4))
		require.Positive(t, req.Alignment)
		assert.Zero(t, req.Size%req.Alignment)

		ms, err := alloc.NewMipmappedArray(f.Ctx, f.Dev, format, alloc.Extent{W: 512, H: 512}, 10, alloc.Sparse())
		require.NoError(t, err)
		defer func() { require.NoError(t, ms.Close(f.Ctx)) }()
		mp, err := ms.SparseProperties(f.Ctx)
		require.NoError(t, err)
		assert.Positive(t, mp.MiptailFirstLevel)
		assert.Less(t, mp.MiptailFirstLevel, 10)
		l0, err := ms.Level(f.Ctx, 0)
		require.NoError(t, err)
		_, err = l0.SparseProperties(f.Ctx)
		require.ErrorIs(t, err, cudaerr.InvalidValue, "a level's sparse properties are its mipmap's")
		md, err := alloc.NewMipmappedArray(f.Ctx, f.Dev, format, alloc.Extent{W: 512, H: 512}, 10, alloc.DeferredMapping())
		require.NoError(t, err)
		defer func() { require.NoError(t, md.Close(f.Ctx)) }()
		mr, err := md.MemoryRequirements(f.Ctx)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, mr.Size, uint64(512*512*4))
	})
}

func TestArrayBadInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := streams.Default(f.Dev)
		f32 := cuda.Channels[float32](1)
		_, err := alloc.NewArray(f.Ctx, f.Dev, cuda.ChannelFormat{X: 8, Y: 8, Z: 8, Kind: cuda.ChannelUnsigned}, alloc.Extent{W: 4})
		require.ErrorIs(t, err, device.ErrInvalidArgument, "3 channels")
		_, err = alloc.NewArray(f.Ctx, f.Dev, f32, alloc.Extent{W: 0, H: 4})
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, err = alloc.NewArray(f.Ctx, f.Dev, f32, alloc.Extent{W: 4, H: 3, D: 6}, alloc.Cubemap())
		require.ErrorIs(t, err, cudaerr.InvalidValue, "a cubemap that is not square")
		_, err = alloc.NewArray(f.Ctx, f.Dev, f32, alloc.Extent{W: 4, H: 4, D: 5}, alloc.Cubemap())
		require.ErrorIs(t, err, cudaerr.InvalidValue, "a cubemap of 5 faces")
		_, err = alloc.NewArray(f.Ctx, f.Dev, f32, alloc.Extent{W: 4, H: 4}, alloc.Layered())
		require.ErrorIs(t, err, cudaerr.InvalidValue, "layered without layers")
		_, err = alloc.NewArray(f.Ctx, f.Dev, f32, alloc.Extent{W: 1 << 20, H: 1 << 20, D: 1 << 20})
		require.ErrorIs(t, err, cudaerr.InvalidValue, "past the device's limits")

		a, err := alloc.NewArray(f.Ctx, f.Dev, f32, alloc.Extent{W: 8, H: 4})
		require.NoError(t, err)
		err = alloc.CopyToArray(f.Ctx, s, a, alloc.Box{Pos: alloc.Pos{X: 1}, W: 8, H: 4}, seq(32)).Wait(f.Ctx)
		require.ErrorIs(t, err, device.ErrOutOfRange, "a box past the array's end")
		err = alloc.CopyToArray(f.Ctx, s, a, a.Whole(), seq(31)).Wait(f.Ctx)
		require.ErrorIs(t, err, device.ErrInvalidArgument, "a slice of the wrong length")
		err = alloc.CopyToArray(f.Ctx, s, a, a.Whole(), make([]float64, 32)).Wait(f.Ctx)
		require.ErrorIs(t, err, device.ErrInvalidArgument, "8-byte values for 4-byte elements")
		b8, err := alloc.NewArray(f.Ctx, f.Dev, cuda.Channels[uint8](1), alloc.Extent{W: 8, H: 4})
		require.NoError(t, err)
		err = alloc.CopyArray(f.Ctx, s, b8, alloc.Pos{}, a, a.Whole()).Wait(f.Ctx)
		require.ErrorIs(t, err, device.ErrInvalidArgument, "element sizes differ")
		p, err := alloc.MallocPitch[uint16](f.Ctx, f.Dev, 8, 4)
		require.NoError(t, err)
		err = alloc.CopyPitchedToArray(f.Ctx, s, a, a.Whole(), p, alloc.Pos{}).Wait(f.Ctx)
		require.ErrorIs(t, err, device.ErrInvalidArgument, "a pitched array of another element size")
		small, err := f.Dev.MallocBytes(f.Ctx, 16)
		require.NoError(t, err)
		err = alloc.CopyDeviceToArray(f.Ctx, s, a, a.Whole(), small).Wait(f.Ctx)
		require.ErrorIs(t, err, device.ErrInvalidArgument, "device memory smaller than the box")

		require.NoError(t, a.Close(f.Ctx))
		require.ErrorIs(t, a.Close(f.Ctx), device.ErrClosed)
		err = alloc.CopyToArray(f.Ctx, s, a, a.Whole(), seq(32)).Wait(f.Ctx)
		require.ErrorIs(t, err, device.ErrClosed, "a freed array")
		_, err = a.Info(f.Ctx)
		require.ErrorIs(t, err, device.ErrClosed)
		require.NoError(t, b8.Close(f.Ctx))
		require.NoError(t, p.Close(f.Ctx))
		require.NoError(t, small.Close(f.Ctx))
		requireStreamUsable(t, f, s)
	})
}

// An array copy between two devices is a peer copy (cudaMemcpy3DPeerAsync).
func TestArrayPeerCopy(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		devs := testdev.All(t, f.Ctx, f.Opts, f.Dev)
		f32 := cuda.Channels[float32](1)
		a, err := alloc.NewArray(f.Ctx, devs[0], f32, alloc.Extent{W: 5, H: 3})
		require.NoError(t, err)
		defer func() { require.NoError(t, a.Close(f.Ctx)) }()
		b, err := alloc.NewArray(f.Ctx, devs[1], f32, alloc.Extent{W: 5, H: 3})
		require.NoError(t, err)
		defer func() { require.NoError(t, b.Close(f.Ctx)) }()
		s0, s1 := streams.Default(devs[0]), streams.Default(devs[1])
		in := seq(15)
		require.NoError(t, alloc.CopyToArray(f.Ctx, s0, a, a.Whole(), in).Wait(f.Ctx))
		require.NoError(t, alloc.CopyArray(f.Ctx, s0, b, alloc.Pos{}, a, a.Whole()).Wait(f.Ctx))
		out := make([]float32, 15)
		require.NoError(t, alloc.CopyFromArray(f.Ctx, s1, out, b, b.Whole()).Wait(f.Ctx))
		assert.Equal(t, in, out)
		if len(devs) > 2 {
			err := alloc.CopyArray(f.Ctx, streams.Default(devs[2]), b, alloc.Pos{}, a, a.Whole()).Wait(f.Ctx)
			require.ErrorIs(t, err, device.ErrWrongDevice, "neither array is the stream's device's")
		}
	})
}

// Arrays made, filled, copied and freed from many goroutines at once: each gets its own
// elements back, and Close waits for the copies queued before it.
func TestArraysConcurrently(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		const workers = 8
		errs := make(chan error, workers)
		for g := range workers {
			go func() {
				errs <- func() error {
					s, err := streams.New(f.Ctx, f.Dev)
					if err != nil {
						return err
					}
					defer func() { _ = s.Close(f.Ctx) }()
					a, err := alloc.NewArray(f.Ctx, f.Dev, cuda.Channels[uint32](1), alloc.Extent{W: 16, H: 4 + g})
					if err != nil {
						return err
					}
					in := make([]uint32, 16*(4+g))
					for i := range in {
						in[i] = uint32(g<<16 | i)
					}
					up := alloc.CopyToArray(f.Ctx, s, a, a.Whole(), in)
					// A 2D box into device memory (cudaMemcpy2DFromArrayAsync), then back into
					// another place of the array (cudaMemcpy2DToArrayAsync).
					buf, err := f.Dev.MallocBytes(f.Ctx, 4*4*2)
					if err != nil {
						return err
					}
					defer func() { _ = buf.Close(f.Ctx) }()
					box := alloc.Box{Pos: alloc.Pos{X: 2, Y: 1}, W: 4, H: 2}
					mid := alloc.CopyArrayToDevice(f.Ctx, s, buf, a, box)
					back := alloc.CopyDeviceToArray(f.Ctx, s, a, alloc.Box{Pos: alloc.Pos{X: 12, Y: 2}, W: 4, H: 2}, buf)
					out := make([]uint32, len(in))
					down := alloc.CopyFromArray(f.Ctx, s, out, a, a.Whole())
					if err := a.Close(f.Ctx); err != nil {
						return err
					}
					for _, fu := range []*streams.Future{up, mid, back, down} {
						if err := fu.Wait(f.Ctx); err != nil {
							return err
						}
					}
					want := append([]uint32(nil), in...)
					for y := range 2 {
						copy(want[(2+y)*16+12:(2+y)*16+16], in[(1+y)*16+2:(1+y)*16+6])
					}
					assert.Equal(t, want, out, "worker %d", g)
					return nil
				}()
			}()
		}
		for range workers {
			require.NoError(t, <-errs)
		}
	})
}

// A device closes with arrays still open; their later use is refused, not a crash.
func TestArraysLeftOpenAtDeviceClose(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	require.NoError(t, err)
	a, err := alloc.NewArray(ctx, dev, cuda.Channels[float32](1), alloc.Extent{W: 4, H: 4})
	require.NoError(t, err)
	m, err := alloc.NewMipmappedArray(ctx, dev, cuda.Channels[float32](1), alloc.Extent{W: 4, H: 4}, 2)
	require.NoError(t, err)
	require.NoError(t, dev.Close())
	require.Error(t, a.Close(ctx))
	require.Error(t, m.Close(ctx))
	_, err = a.Info(ctx)
	require.Error(t, err)
}
