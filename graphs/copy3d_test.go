package graphs_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
)

// volume is w×h×d float32 values counting from base.
func volume(base float32, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = base + float32(i)
	}
	return v
}

// A graph moves a 3D box pitched → array → array → pitched; Node.SetCopy3D and
// Exec.SetCopy3D move the boxes; the parameters read back are those given.
func TestCopy3DNodesThroughArrays(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		const w, h, d = 5, 3, 2
		src, err := alloc.Malloc3D[float32](f.Ctx, f.Dev, w, h, d)
		require.NoError(t, err)
		dst, err := alloc.Malloc3D[float32](f.Ctx, f.Dev, w, h, d)
		require.NoError(t, err)
		a, err := alloc.NewArray(f.Ctx, f.Dev, cuda.Channels[float32](1), alloc.Extent{W: w, H: h, D: d})
		require.NoError(t, err)
		b, err := alloc.NewArray(f.Ctx, f.Dev, cuda.Channels[float32](1), alloc.Extent{W: w, H: h, D: d})
		require.NoError(t, err)
		in := volume(1, w*h*d)
		require.NoError(t, alloc.CopyToPitched(f.Ctx, s, src, src.Whole(), in).Wait(f.Ctx))
		require.NoError(t, alloc.CopyToPitched(f.Ctx, s, dst, dst.Whole(), make([]float32, w*h*d)).Wait(f.Ctx))

		g := f.graph(t)
		up, err := g.AddCopy3D(f.Ctx, nil, graphs.CopyPitchedToArray(a, a.Whole(), src, alloc.Pos{}))
		require.NoError(t, err)
		across, err := g.AddCopy3D(f.Ctx, graphs.After(up), graphs.CopyArray(b, alloc.Pos{}, a, a.Whole()))
		require.NoError(t, err)
		down, err := g.AddCopy3D(f.Ctx, graphs.After(across), graphs.CopyArrayToPitched(dst, alloc.Pos{}, b, b.Whole()))
		require.NoError(t, err)
		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		f.launch(t, x, s)
		got := make([]float32, w*h*d)
		require.NoError(t, alloc.CopyFromPitched(f.Ctx, s, got, dst, dst.Whole()).Wait(f.Ctx))
		assert.Equal(t, in, got, "the box went through both arrays")

		p, err := across.Copy3DParams(f.Ctx)
		require.NoError(t, err)
		assert.Same(t, a, p.Src.Array)
		assert.Same(t, b, p.Dst.Array)
		assert.Equal(t, [3]uint64{w, h, d}, [3]uint64{p.Width, p.Height, p.Depth})
		p, err = up.Copy3DParams(f.Ctx)
		require.NoError(t, err)
		assert.False(t, p.Src.IsArray)
		assert.Equal(t, src.Pitch(), p.Src.Pitch)
		assert.Equal(t, uint64(h), p.Src.Rows)

		// An Exec's copy node takes 1D copies only, as the runtime documents: the box is
		// refused and the Exec runs on. Exec.Update refuses the moved box too (the runtime
		// updates no copy of an array or of a box); a new Exec of the graph, its node moved
		// to a 2×2×1 sub-box of the array at (1,1,1) of dst, has it.
		sub := alloc.Box{Pos: alloc.Pos{X: 2, Y: 1}, W: 2, H: 2, D: 1}
		moved := graphs.CopyArrayToPitched(dst, alloc.Pos{X: 1, Y: 1, Z: 1}, b, sub)
		err = x.SetCopy3D(f.Ctx, down, moved)
		require.ErrorIs(t, err, cudaerr.InvalidValue)
		assert.Contains(t, err.Error(), down.String())
		f.launch(t, x, s)
		require.NoError(t, down.SetCopy3D(f.Ctx, moved))
		var ue *graphs.UpdateError
		require.ErrorAs(t, x.Update(f.Ctx, g), &ue)
		xm, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		require.NoError(t, alloc.CopyToPitched(f.Ctx, s, dst, dst.Whole(), make([]float32, w*h*d)).Wait(f.Ctx))
		f.launch(t, xm, s)
		require.NoError(t, xm.Close(f.Ctx))
		require.NoError(t, alloc.CopyFromPitched(f.Ctx, s, got, dst, dst.Whole()).Wait(f.Ctx))
		want := make([]float32, w*h*d)
		for y := range 2 {
			for xx := range 2 {
				want[(1*h+1+y)*w+1+xx] = in[(0*h+1+y)*w+2+xx]
			}
		}
		assert.Equal(t, want, got, "the new Exec has the moved box")

		// An update may not turn an array side into pitched memory.
		require.NoError(t, down.SetCopy3D(f.Ctx, graphs.CopyPitched(dst, alloc.Pos{}, src, src.Whole())))
		require.ErrorAs(t, x.Update(f.Ctx, g), &ue)
		x2, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		f.launch(t, x2, s)
		require.NoError(t, alloc.CopyFromPitched(f.Ctx, s, got, dst, dst.Whole()).Wait(f.Ctx))
		assert.Equal(t, in, got, "Node.SetCopy3D made it a pitched copy")
		p, err = down.Copy3DParams(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, uint64(w*4), p.Width, "bytes, without an array side")

		// Closing an array a node uses refuses later launches, naming it; nothing ran.
		require.NoError(t, a.Close(f.Ctx))
		_, err = x2.Launch(f.Ctx, s).Await(f.Ctx)
		require.ErrorIs(t, err, device.ErrClosed)
		assert.Contains(t, err.Error(), "array of a 3D copy node")
		require.NoError(t, x.Close(f.Ctx))
		require.NoError(t, x2.Close(f.Ctx))
	})
}

// Bad boxes and mismatched elements are refused before reaching the runtime, naming what was
// wrong; the graph stays usable.
func TestCopy3DBadInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		p, err := alloc.MallocPitch[float32](f.Ctx, f.Dev, 4, 4)
		require.NoError(t, err)
		q, err := alloc.MallocPitch[uint16](f.Ctx, f.Dev, 4, 4)
		require.NoError(t, err)
		a, err := alloc.NewArray(f.Ctx, f.Dev, cuda.Channels[float32](1), alloc.Extent{W: 4, H: 4})
		require.NoError(t, err)
		h, err := alloc.NewArray(f.Ctx, f.Dev, cuda.Channels[uint16](1), alloc.Extent{W: 4, H: 4})
		require.NoError(t, err)
		g := f.graph(t)

		_, err = g.AddCopy3D(f.Ctx, nil, graphs.CopyPitched(p, alloc.Pos{X: 1}, p, p.Whole()))
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "copy destination box")
		_, err = g.AddCopy3D(f.Ctx, nil, graphs.CopyArray(a, alloc.Pos{}, a, alloc.Box{W: 5, H: 1}))
		require.ErrorIs(t, err, device.ErrOutOfRange)
		_, err = g.AddCopy3D(f.Ctx, nil, graphs.CopyArray(a, alloc.Pos{}, h, h.Whole()))
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, err = g.AddCopy3D(f.Ctx, nil, graphs.CopyArrayToPitched(q, alloc.Pos{}, a, a.Whole()))
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "2-byte elements")
		_, err = g.AddCopy3D(f.Ctx, nil, graphs.CopyArray(nil, alloc.Pos{}, a, a.Whole()))
		require.ErrorIs(t, err, device.ErrInvalidArgument)

		_, err = g.AddCopy3D(f.Ctx, nil, graphs.Copy3D{})
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "empty 3D copy")

		// A closed array is refused when the node is made.
		b, err := alloc.NewArray(f.Ctx, f.Dev, cuda.Channels[float32](1), alloc.Extent{W: 4, H: 4})
		require.NoError(t, err)
		require.NoError(t, b.Close(f.Ctx))
		_, err = g.AddCopy3D(f.Ctx, nil, graphs.CopyArray(a, alloc.Pos{}, b, a.Whole()))
		require.ErrorIs(t, err, device.ErrClosed)

		// A memset node is not a copy node; a 1D host copy is not a box copy.
		ms, err := g.AddMemset(f.Ctx, nil, f.buffer(t, 4), 0)
		require.NoError(t, err)
		require.ErrorIs(t, ms.SetCopy3D(f.Ctx, graphs.CopyArray(a, alloc.Pos{}, a, a.Whole())), graphs.ErrWrongKind)
		_, err = ms.Copy3DParams(f.Ctx)
		require.ErrorIs(t, err, graphs.ErrWrongKind)

		ok, err := g.AddCopy3D(f.Ctx, nil, graphs.CopyPitchedToArray(a, a.Whole(), p, alloc.Pos{}))
		require.NoError(t, err)
		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		f.launch(t, x, f.Stream(t))
		_, err = ok.CopyParams(f.Ctx)
		require.Error(t, err, "a box copy is not a 1D copy")
		require.NoError(t, x.Close(f.Ctx))
	})
}

// An Exec's copy node of one row of pitched memory takes another row through SetCopy3D.
func TestCopy3DOneRowOnAnExec(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		const w, h = 6, 3
		src, err := alloc.MallocPitch[float32](f.Ctx, f.Dev, w, h)
		require.NoError(t, err)
		dst, err := alloc.MallocPitch[float32](f.Ctx, f.Dev, w, h)
		require.NoError(t, err)
		in := volume(10, w*h)
		require.NoError(t, alloc.CopyToPitched(f.Ctx, s, src, src.Whole(), in).Wait(f.Ctx))
		require.NoError(t, alloc.CopyToPitched(f.Ctx, s, dst, dst.Whole(), make([]float32, w*h)).Wait(f.Ctx))
		row := func(y int) alloc.Box { return alloc.Box{Pos: alloc.Pos{Y: y}, W: w, H: 1} }
		g := f.graph(t)
		n, err := g.AddCopy3D(f.Ctx, nil, graphs.CopyPitched(dst, alloc.Pos{Y: 0}, src, row(0)))
		require.NoError(t, err)
		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		require.NoError(t, x.SetCopy3D(f.Ctx, n, graphs.CopyPitched(dst, alloc.Pos{Y: 2}, src, row(1))))
		f.launch(t, x, s)
		got := make([]float32, w*h)
		require.NoError(t, alloc.CopyFromPitched(f.Ctx, s, got, dst, dst.Whole()).Wait(f.Ctx))
		want := make([]float32, w*h)
		copy(want[2*w:3*w], in[w:2*w])
		assert.Equal(t, want, got, "the Exec copied row 1 to row 2")
		require.NoError(t, x.Close(f.Ctx))
	})
}
