package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// upload copies data into a fresh device allocation and returns it.
func upload(t *testing.T, d backend.Device, s backend.Stream, data []byte) backend.DevicePtr {
	t.Helper()
	p := malloc(t, d, uint64(len(data)))
	require.NoError(t, d.CopyHtoD(p, hostPtr(data), uint64(len(data)), s))
	return p
}

// download reads n bytes of device memory after the work on s.
func download(t *testing.T, d backend.Device, s backend.Stream, p backend.DevicePtr, n int) []byte {
	t.Helper()
	out := make([]byte, n)
	require.NoError(t, d.CopyDtoH(hostPtr(out), p, uint64(n), s))
	require.NoError(t, d.StreamSynchronize(s))
	return out
}

func ramp(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 1)
	}
	return b
}

func TestArrayRoundTripsEveryShape(t *testing.T) {
	_, d0, _ := open(t)
	s := mkStream(t, d0)
	f := cuda.Channels[uint16](2) // 4-byte elements
	cases := []struct {
		name  string
		ext   backend.Extent3D
		flags uint32
	}{
		{"1D", backend.Extent3D{Width: 9}, 0},
		{"2D", backend.Extent3D{Width: 5, Height: 3}, backend.ArraySurfaceLoadStore | backend.ArrayTextureGather},
		{"3D", backend.Extent3D{Width: 4, Height: 3, Depth: 2}, 0},
		{"layered1D", backend.Extent3D{Width: 6, Depth: 3}, backend.ArrayLayered},
		{"layered2D", backend.Extent3D{Width: 3, Height: 2, Depth: 4}, backend.ArrayLayered | backend.ArraySurfaceLoadStore},
		{"cubemap", backend.Extent3D{Width: 2, Height: 2, Depth: 6}, backend.ArrayCubemap},
		{"layeredCubemap", backend.Extent3D{Width: 2, Height: 2, Depth: 12}, backend.ArrayCubemap | backend.ArrayLayered},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := d0.Malloc3DArray(f, c.ext, c.flags)
			require.NoError(t, err)
			info, err := d0.ArrayInfo(a)
			require.NoError(t, err)
			assert.Equal(t, backend.ArrayInfo{Format: f, Extent: c.ext, Flags: c.flags}, info)
			got, err := d0.ChannelDesc(a)
			require.NoError(t, err)
			assert.Equal(t, f, got)

			w, h, dd := c.ext.Width, max(c.ext.Height, 1), max(c.ext.Depth, 1)
			row := w * 4
			data := ramp(int(row * h * dd))
			src := upload(t, d0, s, data)
			ext := backend.Extent3D{Width: w, Height: h, Depth: dd}
			// device → array → array → pitched device memory → host
			require.NoError(t, d0.Copy3D(backend.Copy3DParams{Src: backend.Place3D{Ptr: src, Pitch: row, Rows: h}, Dst: backend.Place3D{Array: a}, Extent: ext}, s))
			b, err := d0.Malloc3DArray(f, c.ext, c.flags)
			require.NoError(t, err)
			require.NoError(t, d0.Copy3D(backend.Copy3DParams{Src: backend.Place3D{Array: a}, Dst: backend.Place3D{Array: b}, Extent: ext}, s))
			p, pitch, err := d0.MallocPitch(row, h*dd)
			require.NoError(t, err)
			require.NoError(t, d0.Copy3D(backend.Copy3DParams{Src: backend.Place3D{Array: b}, Dst: backend.Place3D{Ptr: p, Pitch: pitch, Rows: h}, Extent: ext}, s))
			out := make([]byte, len(data))
			require.NoError(t, d0.Copy2DDtoH(hostPtr(out), row, p, pitch, row, h*dd, s))
			require.NoError(t, d0.StreamSynchronize(s))
			assert.Equal(t, data, out)
			// The array's storage is the dense x-fastest layout texel reads.
			arr := d0.(*device).lookupArray(b)
			assert.Equal(t, data[4*(w*h*(dd-1)+w*(h-1)+1):][:4], arr.texel(1, int64(h-1), int64(dd-1)))
			require.NoError(t, d0.FreeArray(a))
			require.NoError(t, d0.FreeArray(b))
		})
	}
}

func TestArraySubBoxesAnd2DCopies(t *testing.T) {
	_, d0, _ := open(t)
	s := mkStream(t, d0)
	a, err := d0.MallocArray(cuda.Channels[uint8](1), 8, 4, 0)
	require.NoError(t, err)
	defer func() { require.NoError(t, d0.FreeArray(a)) }()
	zero := upload(t, d0, s, make([]byte, 32))
	require.NoError(t, d0.Copy2DToArray(a, 0, 0, zero, 8, 8, 4, s))
	// A 3×2 box at (4, 1) from rows 16 bytes apart.
	src := upload(t, d0, s, ramp(32))
	require.NoError(t, d0.Copy2DToArray(a, 4, 1, src, 16, 3, 2, s))
	dst := malloc(t, d0, 32)
	require.NoError(t, d0.Copy2DFromArray(dst, 8, a, 0, 0, 8, 4, s))
	got := download(t, d0, s, dst, 32)
	want := make([]byte, 32)
	r := ramp(32)
	copy(want[1*8+4:], r[0:3])
	copy(want[2*8+4:], r[16:19])
	assert.Equal(t, want, got)

	// A sub-box out of the middle of a 3D array into pitched memory at an offset.
	b, err := d0.Malloc3DArray(cuda.Channels[uint8](1), backend.Extent3D{Width: 4, Height: 4, Depth: 4}, 0)
	require.NoError(t, err)
	whole := upload(t, d0, s, ramp(64))
	require.NoError(t, d0.Copy3D(backend.Copy3DParams{Src: backend.Place3D{Ptr: whole, Pitch: 4, Rows: 4}, Dst: backend.Place3D{Array: b},
		Extent: backend.Extent3D{Width: 4, Height: 4, Depth: 4}}, s))
	out := malloc(t, d0, 64)
	require.NoError(t, d0.Memset3D(out, 8, 4, 0xee, backend.Extent3D{Width: 8, Height: 4, Depth: 2}, s))
	require.NoError(t, d0.Copy3D(backend.Copy3DParams{
		Src:    backend.Place3D{Array: b, Pos: backend.Pos3D{X: 1, Y: 2, Z: 1}},
		Dst:    backend.Place3D{Ptr: out, Pitch: 8, Rows: 4, Pos: backend.Pos3D{X: 2, Y: 1}},
		Extent: backend.Extent3D{Width: 2, Height: 2, Depth: 2}}, s))
	got = download(t, d0, s, out, 64)
	want = make([]byte, 64)
	for i := range want {
		want[i] = 0xee
	}
	r = ramp(64)
	for z := range 2 {
		for y := range 2 {
			for x := range 2 {
				want[z*32+(1+y)*8+2+x] = r[(1+z)*16+(2+y)*4+1+x]
			}
		}
	}
	assert.Equal(t, want, got)
	require.NoError(t, d0.FreeArray(b))
}

func TestArrayPeerCopy(t *testing.T) {
	_, d0, d1 := open(t)
	s := mkStream(t, d0)
	f := cuda.Channels[float32](1)
	a, err := d0.MallocArray(f, 4, 2, 0)
	require.NoError(t, err)
	b, err := d1.MallocArray(f, 4, 2, 0)
	require.NoError(t, err)
	ext := backend.Extent3D{Width: 4, Height: 2, Depth: 1}
	src := upload(t, d0, s, ramp(32))
	require.NoError(t, d0.Copy3D(backend.Copy3DParams{Src: backend.Place3D{Ptr: src, Pitch: 16, Rows: 2}, Dst: backend.Place3D{Array: a}, Extent: ext}, s))
	require.NoError(t, d0.Copy3DPeer(backend.Copy3DParams{Src: backend.Place3D{Array: a}, Dst: backend.Place3D{Array: b}, Extent: ext}, 0, 1, s))
	require.NoError(t, d0.StreamSynchronize(s))
	assert.Equal(t, ramp(32), d1.(*device).lookupArray(b).data)
	// The array is d1's: a copy on d0 that names it as d0's is refused.
	err = d0.Copy3D(backend.Copy3DParams{Src: backend.Place3D{Array: a}, Dst: backend.Place3D{Array: b}, Extent: ext}, s)
	requireCode(t, err, cudaerr.InvalidResourceHandle)
	requireCode(t, d0.Copy3DPeer(backend.Copy3DParams{Src: backend.Place3D{Array: a}, Dst: backend.Place3D{Array: b}, Extent: ext}, 0, 7, s), cudaerr.InvalidDevice)
}

func TestMipmappedArrayLevels(t *testing.T) {
	_, d0, _ := open(t)
	f := cuda.Channels[uint8](4)
	m, err := d0.MallocMipmappedArray(f, backend.Extent3D{Width: 16, Height: 5}, 5, 0)
	require.NoError(t, err)
	var widths, heights []uint64
	for i := range uint32(5) {
		l, err := d0.MipmappedArrayLevel(m, i)
		require.NoError(t, err)
		info, err := d0.ArrayInfo(l)
		require.NoError(t, err)
		assert.Equal(t, f, info.Format)
		assert.Zero(t, info.Extent.Depth)
		widths, heights = append(widths, info.Extent.Width), append(heights, info.Extent.Height)
		assert.Same(t, d0.(*device).lookupMipmapped(m).levels[i], d0.(*device).lookupArray(l))
	}
	assert.Equal(t, []uint64{16, 8, 4, 2, 1}, widths)
	assert.Equal(t, []uint64{5, 2, 1, 1, 1}, heights)
	_, err = d0.MipmappedArrayLevel(m, 5)
	requireCode(t, err, cudaerr.InvalidValue)
	l0, _ := d0.MipmappedArrayLevel(m, 0)
	requireCode(t, d0.FreeArray(l0), cudaerr.InvalidValue, "a level is freed with its mipmap")
	// Level counts are clamped to 1 to 1+log2 of the largest extent.
	for _, c := range []struct{ asked, got uint32 }{{6, 5}, {100, 5}, {0, 1}} {
		cm, err := d0.MallocMipmappedArray(f, backend.Extent3D{Width: 16, Height: 5}, c.asked, 0)
		require.NoError(t, err, "%d levels", c.asked)
		assert.Len(t, d0.(*device).lookupMipmapped(cm).levels, int(c.got), "%d levels", c.asked)
		last, err := d0.MipmappedArrayLevel(cm, c.got-1)
		require.NoError(t, err)
		_, err = d0.MipmappedArrayLevel(cm, c.got)
		requireCode(t, err, cudaerr.InvalidValue, "%d levels", c.asked)
		if c.got == 5 {
			info, err := d0.ArrayInfo(last)
			require.NoError(t, err)
			assert.Equal(t, backend.Extent3D{Width: 1, Height: 1}, info.Extent)
		}
		require.NoError(t, d0.FreeMipmappedArray(cm))
	}

	// Layered mipmaps keep their layers.
	lm, err := d0.MallocMipmappedArray(f, backend.Extent3D{Width: 4, Height: 4, Depth: 3}, 3, backend.ArrayLayered)
	require.NoError(t, err)
	l2, err := d0.MipmappedArrayLevel(lm, 2)
	require.NoError(t, err)
	info, err := d0.ArrayInfo(l2)
	require.NoError(t, err)
	assert.Equal(t, backend.Extent3D{Width: 1, Height: 1, Depth: 3}, info.Extent)

	used := d0.(*device).mem.inUse()
	require.NoError(t, d0.FreeMipmappedArray(m))
	assert.Less(t, d0.(*device).mem.inUse(), used, "the levels' memory is freed")
	_, err = d0.ArrayInfo(l0)
	requireCode(t, err, cudaerr.InvalidResourceHandle, "a freed mipmap's level is gone")
	requireCode(t, d0.FreeMipmappedArray(m), cudaerr.InvalidResourceHandle)
	require.NoError(t, d0.FreeMipmappedArray(lm))
}

func TestArraySparseAndDeferred(t *testing.T) {
	_, d0, _ := open(t)
	f := cuda.Channels[float32](1)
	plain, err := d0.MallocArray(f, 300, 200, 0)
	require.NoError(t, err)
	_, err = d0.ArraySparseProperties(plain)
	requireCode(t, err, cudaerr.InvalidValue, "sparse properties need the sparse flag")
	_, err = d0.ArrayMemoryRequirements(plain)
	requireCode(t, err, cudaerr.InvalidValue, "memory requirements need the deferred-mapping flag")

	sp, err := d0.MallocArray(f, 300, 200, backend.ArraySparse)
	require.NoError(t, err)
	props, err := d0.ArraySparseProperties(sp)
	require.NoError(t, err)
	assert.Equal(t, uint32(128), props.TileWidth)
	assert.Equal(t, uint32(128), props.TileHeight)
	assert.Equal(t, uint32(1), props.TileDepth)
	assert.Zero(t, props.MiptailFirstLevel)
	assert.Equal(t, backend.ArraySparseSingleMipTail, props.Flags)
	assert.Equal(t, uint64(6*64<<10), props.MiptailSize, "300×200 floats in 3×2 tiles of 128×128")
	_, err = d0.MallocArray(f, 300, 0, backend.ArraySparse)
	requireCode(t, err, cudaerr.InvalidValue, "no 1D sparse arrays")

	df, err := d0.MallocArray(f, 300, 200, backend.ArrayDeferredMapping)
	require.NoError(t, err)
	req, err := d0.ArrayMemoryRequirements(df)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, req.Size, uint64(300*200*4))
	assert.Zero(t, req.Size%req.Alignment)

	mm, err := d0.MallocMipmappedArray(f, backend.Extent3D{Width: 256, Height: 256}, 9, backend.ArraySparse|backend.ArrayDeferredMapping)
	require.NoError(t, err)
	mp, err := d0.MipmappedArraySparseProperties(mm)
	require.NoError(t, err)
	assert.Equal(t, uint32(2), mp.MiptailFirstLevel, "64×64 is the first level under a 128×128 tile")
	mr, err := d0.MipmappedArrayMemoryRequirements(mm)
	require.NoError(t, err)
	assert.Greater(t, mr.Size, req.Size)
	l0, err := d0.MipmappedArrayLevel(mm, 0)
	require.NoError(t, err)
	_, err = d0.ArraySparseProperties(l0)
	requireCode(t, err, cudaerr.InvalidValue, "a level's sparse properties are its mipmap's")
	_, err = d0.ArrayPlane(sp, 0)
	requireCode(t, err, cudaerr.InvalidValue, "single-planar arrays have no planes")
}

func TestArrayBadInput(t *testing.T) {
	_, d0, _ := open(t)
	s := mkStream(t, d0)
	f := cuda.Channels[float32](1)
	bad := []struct {
		name  string
		f     cuda.ChannelFormat
		ext   backend.Extent3D
		flags uint32
		code  cudaerr.Code
	}{
		{"3 channels", cuda.ChannelFormat{X: 8, Y: 8, Z: 8, Kind: cuda.ChannelUnsigned}, backend.Extent3D{Width: 4}, 0, cudaerr.InvalidChannelDescriptor},
		{"float8", cuda.ChannelFormat{X: 8, Kind: cuda.ChannelFloat}, backend.Extent3D{Width: 4}, 0, cudaerr.InvalidChannelDescriptor},
		{"no channels", cuda.ChannelFormat{}, backend.Extent3D{Width: 4}, 0, cudaerr.InvalidChannelDescriptor},
		{"zero width", f, backend.Extent3D{Height: 4}, 0, cudaerr.InvalidValue},
		{"cube not square", f, backend.Extent3D{Width: 4, Height: 3, Depth: 6}, backend.ArrayCubemap, cudaerr.InvalidValue},
		{"cube depth 5", f, backend.Extent3D{Width: 4, Height: 4, Depth: 5}, backend.ArrayCubemap, cudaerr.InvalidValue},
		{"layered cube depth 8", f, backend.Extent3D{Width: 4, Height: 4, Depth: 8}, backend.ArrayCubemap | backend.ArrayLayered, cudaerr.InvalidValue},
		{"layered without depth", f, backend.Extent3D{Width: 4, Height: 4}, backend.ArrayLayered, cudaerr.InvalidValue},
		{"gather on 3D", f, backend.Extent3D{Width: 4, Height: 4, Depth: 4}, backend.ArrayTextureGather, cudaerr.InvalidValue},
		{"unknown flag", f, backend.Extent3D{Width: 4}, 0x10, cudaerr.InvalidValue},
		{"3D too wide", f, backend.Extent3D{Width: maxArray3D + 1, Height: 1, Depth: 1}, 0, cudaerr.InvalidValue},
		{"overflowing extent", f, backend.Extent3D{Width: 1 << 62, Height: 1 << 62}, 0, cudaerr.InvalidValue},
		{"past the memory", f, backend.Extent3D{Width: 16384, Height: 16384, Depth: 16384}, 0, cudaerr.MemoryAllocation},
	}
	for _, c := range bad {
		_, err := d0.Malloc3DArray(c.f, c.ext, c.flags)
		requireCode(t, err, c.code, c.name)
	}
	_, err := d0.MallocArray(f, 4, 4, backend.ArrayLayered)
	requireCode(t, err, cudaerr.InvalidValue, "MallocArray makes no layered arrays")

	a, err := d0.MallocArray(f, 4, 4, 0)
	require.NoError(t, err)
	src := malloc(t, d0, 256)
	ext := backend.Extent3D{Width: 4, Height: 4, Depth: 1}
	copies := []struct {
		name string
		p    backend.Copy3DParams
		code cudaerr.Code
	}{
		{"past the array's end", backend.Copy3DParams{Src: backend.Place3D{Ptr: src, Pitch: 16, Rows: 4}, Dst: backend.Place3D{Array: a, Pos: backend.Pos3D{X: 1}}, Extent: ext}, cudaerr.InvalidValue},
		{"past the array's depth", backend.Copy3DParams{Src: backend.Place3D{Ptr: src, Pitch: 16, Rows: 4}, Dst: backend.Place3D{Array: a}, Extent: backend.Extent3D{Width: 4, Height: 4, Depth: 2}}, cudaerr.InvalidValue},
		{"pitch under a row", backend.Copy3DParams{Src: backend.Place3D{Ptr: src, Pitch: 8, Rows: 4}, Dst: backend.Place3D{Array: a}, Extent: ext}, cudaerr.InvalidPitchValue},
		{"past the buffer", backend.Copy3DParams{Src: backend.Place3D{Ptr: src, Pitch: 64, Rows: 4, Pos: backend.Pos3D{Y: 1}}, Dst: backend.Place3D{Array: a}, Extent: ext}, cudaerr.InvalidValue},
		{"no source", backend.Copy3DParams{Dst: backend.Place3D{Array: a}, Extent: ext}, cudaerr.InvalidValue},
		{"unknown array", backend.Copy3DParams{Src: backend.Place3D{Array: 12345}, Dst: backend.Place3D{Array: a}, Extent: ext}, cudaerr.InvalidResourceHandle},
		{"overflowing position", backend.Copy3DParams{Src: backend.Place3D{Array: a, Pos: backend.Pos3D{X: ^uint64(0)}}, Dst: backend.Place3D{Array: a}, Extent: ext}, cudaerr.InvalidValue},
	}
	for _, c := range copies {
		requireCode(t, d0.Copy3D(c.p, s), c.code, c.name)
	}
	b, err := d0.MallocArray(cuda.Channels[uint8](1), 4, 4, 0)
	require.NoError(t, err)
	requireCode(t, d0.Copy3D(backend.Copy3DParams{Src: backend.Place3D{Array: a}, Dst: backend.Place3D{Array: b}, Extent: ext}, s), cudaerr.InvalidValue, "element sizes differ")
	requireCode(t, d0.Copy2DToArray(a, 2, 0, src, 16, 4, 1, s), cudaerr.InvalidValue, "a byte column inside an element")
	requireCode(t, d0.Memset3D(src, 16, 2, 0, backend.Extent3D{Width: 16, Height: 4, Depth: 2}, s), cudaerr.InvalidValue, "rows past a slice")
	requireCode(t, d0.Memset3D(src, 16, 4, 0, backend.Extent3D{Width: 16, Height: 4, Depth: 5}, s), cudaerr.InvalidValue, "past the buffer")

	require.NoError(t, d0.FreeArray(a))
	requireCode(t, d0.FreeArray(a), cudaerr.InvalidResourceHandle, "double free")
	requireCode(t, d0.Copy3D(backend.Copy3DParams{Src: backend.Place3D{Array: a}, Dst: backend.Place3D{Array: b}, Extent: ext}, s), cudaerr.InvalidResourceHandle, "a freed array")

	// The device is still usable after every refusal.
	require.NoError(t, d0.Copy3D(backend.Copy3DParams{Src: backend.Place3D{Ptr: src, Pitch: 4, Rows: 4}, Dst: backend.Place3D{Array: b}, Extent: ext}, s))
	require.NoError(t, d0.StreamSynchronize(s))
	require.NoError(t, d0.FreeArray(b))
}

func TestArrayFreedWhileQueuedFaults(t *testing.T) {
	_, d0, _ := open(t)
	s := mkStream(t, d0)
	g := newGate(t)
	k := kernels(t, d0, map[string]backend.SimKernel{"wait": gatedFill(g)})["wait"]
	a, err := d0.MallocArray(cuda.Channels[uint8](1), 4, 1, 0)
	require.NoError(t, err)
	p := malloc(t, d0, 64)
	launch(t, d0, k, s, ptrArg(p), u64Arg(1), f64Arg(0))
	require.NoError(t, d0.Copy3D(backend.Copy3DParams{Src: backend.Place3D{Ptr: p, Pitch: 4, Rows: 1}, Dst: backend.Place3D{Array: a}, Extent: backend.Extent3D{Width: 4, Height: 1, Depth: 1}}, s))
	require.NoError(t, d0.FreeArray(a))
	g.release()
	requireCode(t, d0.StreamSynchronize(s), cudaerr.IllegalAddress)
}

// A captured array copy and 3D memset are a memcpy and a memset node, and the graph replays
// them.
func TestArrayCopiesCapture(t *testing.T) {
	_, d0, _ := open(t)
	s := mkStream(t, d0)
	a, err := d0.MallocArray(cuda.Channels[uint8](1), 4, 2, 0)
	require.NoError(t, err)
	p := malloc(t, d0, 64)
	require.NoError(t, d0.StreamBeginCapture(s, backend.CaptureGlobal))
	require.NoError(t, d0.Memset3D(p, 4, 2, 7, backend.Extent3D{Width: 4, Height: 2, Depth: 1}, s))
	require.NoError(t, d0.Copy3D(backend.Copy3DParams{Src: backend.Place3D{Ptr: p, Pitch: 4, Rows: 2}, Dst: backend.Place3D{Array: a}, Extent: backend.Extent3D{Width: 4, Height: 2, Depth: 1}}, s))
	g, err := d0.StreamEndCapture(s)
	require.NoError(t, err)
	nodes, err := d0.GraphNodes(g)
	require.NoError(t, err)
	var types []backend.NodeType
	for _, n := range nodes {
		ty, err := d0.GraphNodeType(n)
		require.NoError(t, err)
		types = append(types, ty)
	}
	assert.ElementsMatch(t, []backend.NodeType{backend.NodeMemset, backend.NodeMemcpy}, types)
	x, err := d0.GraphInstantiate(g, 0)
	require.NoError(t, err)
	require.NoError(t, d0.GraphLaunch(x, s))
	require.NoError(t, d0.StreamSynchronize(s))
	assert.Equal(t, []byte{7, 7, 7, 7, 7, 7, 7, 7}, d0.(*device).lookupArray(a).data)
}
