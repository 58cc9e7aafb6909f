package alloc_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// seq is 1, 2, ..., n as float32s, so that a misplaced element shows.
func seq(n int) []float32 {
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(i + 1)
	}
	return xs
}

func TestPitchedRoundTripOddWidth(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		const w, h = 37, 11 // 148-byte rows: the pitch pads them
		p, err := alloc.MallocPitch[float32](f.Ctx, f.Dev, w, h)
		require.NoError(t, err)
		defer func() { require.NoError(t, p.Close(f.Ctx)) }()
		assert.Equal(t, w, p.Width())
		assert.Equal(t, h, p.Height())
		assert.Equal(t, 1, p.Depth())
		assert.Equal(t, w*h, p.Len())
		assert.GreaterOrEqual(t, p.Pitch(), uint64(w*4))
		assert.Equal(t, p.Pitch()*h, p.Size())

		s := streams.Default(f.Dev)
		in := seq(w * h)
		require.NoError(t, alloc.CopyToPitched(f.Ctx, s, p, p.Whole(), in).Wait(f.Ctx))
		out := make([]float32, w*h)
		require.NoError(t, alloc.CopyFromPitched(f.Ctx, s, out, p, p.Whole()).Wait(f.Ctx))
		assert.Equal(t, in, out)

		// Row 3 as device memory holds exactly row 3.
		row := make([]float32, w)
		testdev.Read(t, f.Ctx, row, p.Row(3, 0))
		assert.Equal(t, in[3*w:4*w], row)
	})
}

func TestPitchedSubRectanglesAndMemset(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		const w, h = 9, 7
		s := streams.Default(f.Dev)
		a, err := alloc.MallocPitch[uint32](f.Ctx, f.Dev, w, h)
		require.NoError(t, err)
		defer func() { require.NoError(t, a.Close(f.Ctx)) }()
		b, err := alloc.MallocPitch[uint32](f.Ctx, f.Dev, 5, 4)
		require.NoError(t, err)
		defer func() { require.NoError(t, b.Close(f.Ctx)) }()

		require.NoError(t, alloc.MemsetPitched(f.Ctx, s, a, a.Whole(), 0).Wait(f.Ctx))
		require.NoError(t, alloc.MemsetPitched(f.Ctx, s, b, b.Whole(), 0x11).Wait(f.Ctx))
		// A 3×2 box of a at (4,1) from the host, then b's 2×2 box at (1,1) into a at (0,5).
		box := alloc.Box{Pos: alloc.Pos{X: 4, Y: 1}, W: 3, H: 2}
		require.NoError(t, alloc.CopyToPitched(f.Ctx, s, a, box, []uint32{1, 2, 3, 4, 5, 6}).Wait(f.Ctx))
		require.NoError(t, alloc.CopyPitched(f.Ctx, s, a, alloc.Pos{Y: 5}, b, alloc.Box{Pos: alloc.Pos{X: 1, Y: 1}, W: 2, H: 2}).Wait(f.Ctx))
		require.NoError(t, alloc.MemsetPitched(f.Ctx, s, a, alloc.Box{Pos: alloc.Pos{X: 8}, W: 1, H: 7}, 0xff).Wait(f.Ctx))

		want := make([]uint32, w*h)
		for y := range h {
			want[y*w+8] = 0xffffffff
		}
		copy(want[1*w+4:], []uint32{1, 2, 3})
		copy(want[2*w+4:], []uint32{4, 5, 6})
		copy(want[5*w:], []uint32{0x11111111, 0x11111111})
		copy(want[6*w:], []uint32{0x11111111, 0x11111111})
		got := make([]uint32, w*h)
		require.NoError(t, alloc.CopyFromPitched(f.Ctx, s, got, a, a.Whole()).Wait(f.Ctx))
		assert.Equal(t, want, got)

		sub := make([]uint32, 6)
		require.NoError(t, alloc.CopyFromPitched(f.Ctx, s, sub, a, box).Wait(f.Ctx))
		assert.Equal(t, []uint32{1, 2, 3, 4, 5, 6}, sub)
	})
}

func TestVolumeRoundTripAndSubBox(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		const w, h, d = 13, 5, 4
		s := streams.Default(f.Dev)
		v, err := alloc.Malloc3D[float32](f.Ctx, f.Dev, w, h, d)
		require.NoError(t, err)
		defer func() { require.NoError(t, v.Close(f.Ctx)) }()
		assert.Equal(t, v.Pitch()*h*d, v.Size())
		in := seq(w * h * d)
		require.NoError(t, alloc.CopyToPitched(f.Ctx, s, v, v.Whole(), in).Wait(f.Ctx))

		// A 2×3×2 box at (10,1,2): not whole-height, so one 2D copy per slice.
		box := alloc.Box{Pos: alloc.Pos{X: 10, Y: 1, Z: 2}, W: 2, H: 3, D: 2}
		var want []float32
		for z := 2; z < 4; z++ {
			for y := 1; y < 4; y++ {
				base := (z*h+y)*w + 10
				want = append(want, in[base:base+2]...)
			}
		}
		got := make([]float32, len(want))
		require.NoError(t, alloc.CopyFromPitched(f.Ctx, s, got, v, box).Wait(f.Ctx))
		assert.Equal(t, want, got)

		// Copy the volume into another, slice by slice through the same box, and check it.
		u, err := alloc.Malloc3D[float32](f.Ctx, f.Dev, w, h, d)
		require.NoError(t, err)
		defer func() { require.NoError(t, u.Close(f.Ctx)) }()
		require.NoError(t, alloc.CopyPitched(f.Ctx, s, u, alloc.Pos{}, v, v.Whole()).Wait(f.Ctx))
		all := make([]float32, w*h*d)
		require.NoError(t, alloc.CopyFromPitched(f.Ctx, s, all, u, u.Whole()).Wait(f.Ctx))
		assert.Equal(t, in, all)
	})
}

func TestPitchedBadInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := streams.Default(f.Dev)
		p, err := alloc.MallocPitch[float32](f.Ctx, f.Dev, 8, 4)
		require.NoError(t, err)
		defer func() { require.NoError(t, p.Close(f.Ctx)) }()

		_, err = alloc.MallocPitch[float32](f.Ctx, f.Dev, 0, 4)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, err = alloc.Malloc3D[float32](f.Ctx, f.Dev, 1<<40, 1<<40, 1<<40)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "overflow")

		cases := []struct {
			name string
			fut  *streams.Future
			want string
		}{
			{"box past the right edge", alloc.CopyToPitched(f.Ctx, s, p, alloc.Box{Pos: alloc.Pos{X: 6}, W: 3, H: 1}, []float32{1, 2, 3}), "3×1×1 at (6,0,0)"},
			{"box past the bottom", alloc.MemsetPitched(f.Ctx, s, p, alloc.Box{W: 8, H: 5}, 0), "outside the 8×4×1 array"},
			{"empty box", alloc.CopyFromPitched(f.Ctx, s, []float32{}, p, alloc.Box{W: 0, H: 1}), "empty"},
			{"wrong slice length", alloc.CopyToPitched(f.Ctx, s, p, p.Whole(), make([]float32, 31)), "31 elements"},
			{"negative origin", alloc.CopyPitched(f.Ctx, s, p, alloc.Pos{X: -1}, p, alloc.Box{W: 1, H: 1}), "(-1,0,0)"},
			{"nil stream", alloc.MemsetPitched(f.Ctx, nil, p, p.Whole(), 0), "nil stream"},
		}
		for _, c := range cases {
			err := c.fut.Wait(f.Ctx)
			require.ErrorIs(t, err, device.ErrInvalidArgument, c.name)
			assert.Contains(t, err.Error(), c.want, c.name)
		}
		requireStreamUsable(t, f, s)
	})
}
