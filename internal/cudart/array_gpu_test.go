package cudart

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Bytes through every array binding: host → device memory → 2D array (2D to-array copy) →
// layered array (3D copy) → array on "another" device (3D peer copy, device 0 to 0) →
// pitched memory (3D copy) around a 3D memset → device memory (2D from-array copy) → host.
// A wrong struct layout or argument order puts some byte elsewhere.
func TestGPUArrayRoundTrip(t *testing.T) {
	rt := gpuRuntime(t)
	s, err := rt.StreamCreateWithPriority(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	defer rt.StreamDestroy(s)     //nolint:errcheck
	f := cuda.Channels[uint16](2) // 4-byte elements
	const w, h = 7, 5
	a, err := rt.MallocArray(f, w, h, uint32(backend.ArraySurfaceLoadStore))
	require.NoError(t, err)
	defer rt.FreeArray(a) //nolint:errcheck
	gf, ge, gflags, err := rt.ArrayGetInfo(a)
	require.NoError(t, err)
	assert.Equal(t, f, gf)
	assert.Equal(t, Extent{Width: w, Height: h}, ge)
	assert.Equal(t, backend.ArraySurfaceLoadStore, gflags&backend.ArraySurfaceLoadStore)
	cf, err := rt.GetChannelDesc(a)
	require.NoError(t, err)
	assert.Equal(t, f, cf)

	b, err := rt.Malloc3DArray(f, Extent{Width: w, Height: h, Depth: 3}, backend.ArrayLayered)
	require.NoError(t, err)
	defer rt.FreeArray(b) //nolint:errcheck
	_, be, bflags, err := rt.ArrayGetInfo(b)
	require.NoError(t, err)
	assert.Equal(t, Extent{Width: w, Height: h, Depth: 3}, be)
	assert.Equal(t, backend.ArrayLayered, bflags&backend.ArrayLayered)
	c, err := rt.Malloc3DArray(f, Extent{Width: w, Height: h, Depth: 3}, backend.ArrayLayered)
	require.NoError(t, err)
	defer rt.FreeArray(c) //nolint:errcheck

	const n = w * h * 4
	host, err := rt.HostAlloc(4096, backend.HostAllocDefault)
	require.NoError(t, err)
	defer rt.FreeHost(host) //nolint:errcheck
	hb := unsafe.Slice((*byte)(host), 4096)
	for i := range hb[:n] {
		hb[i] = byte(i*7 + 1)
	}
	src := append([]byte(nil), hb[:n]...)
	dp, err := rt.Malloc(4096)
	require.NoError(t, err)
	defer rt.Free(dp) //nolint:errcheck
	require.NoError(t, rt.MemcpyAsync(uintptr(dp), uintptr(host), n, MemcpyHostToDevice, s))
	require.NoError(t, rt.Memcpy2DToArrayAsync(a, 0, 0, uintptr(dp), w*4, w*4, h, MemcpyDeviceToDevice, s))
	// a → layer 2 of b, then b's layer 2 → layer 1 of c through the peer form.
	toB := Memcpy3DParms{SrcArray: uintptr(a), DstArray: uintptr(b), DstPos: Pos{Z: 2}, Extent: Extent{Width: w, Height: h, Depth: 1}, Kind: MemcpyDeviceToDevice}
	require.NoError(t, rt.Memcpy3DAsync(&toB, s))
	toC := Memcpy3DPeerParms{SrcArray: uintptr(b), SrcPos: Pos{Z: 2}, DstArray: uintptr(c), DstPos: Pos{Z: 1}, Extent: Extent{Width: w, Height: h, Depth: 1}}
	require.NoError(t, rt.Memcpy3DPeerAsync(&toC, s))

	// A 3×2 element box at (2, 1) of c's layer 1 into pitched memory at byte 8, row 1, after
	// a 3D memset of the whole of it. With an array in the copy the runtime reads the pitched
	// side's X in the array's elements too: X 2 is byte 8 (X 8 landed at byte 32).
	p, pitch, err := rt.MallocPitch(64, 8)
	require.NoError(t, err)
	defer rt.Free(p) //nolint:errcheck
	require.NoError(t, rt.Memset3DAsync(PitchedPtr{Ptr: uintptr(p), Pitch: pitch, XSize: 64, YSize: 4}, 0x5A, Extent{Width: 64, Height: 4, Depth: 2}, s))
	toP := Memcpy3DParms{SrcArray: uintptr(c), SrcPos: Pos{X: 2, Y: 1, Z: 1},
		DstPtr: PitchedPtr{Ptr: uintptr(p), Pitch: pitch, XSize: 64, YSize: 4}, DstPos: Pos{X: 2, Y: 1},
		Extent: Extent{Width: 3, Height: 2, Depth: 1}, Kind: MemcpyDeviceToDevice}
	require.NoError(t, rt.Memcpy3DAsync(&toP, s))
	require.NoError(t, rt.Memcpy2DAsync(uintptr(host), 64, uintptr(p), pitch, 64, 8, MemcpyDeviceToHost, s))
	require.NoError(t, rt.StreamSynchronize(s))
	want := make([]byte, 64*8)
	for i := range want {
		want[i] = 0x5A
	}
	for y := range 2 {
		copy(want[(1+y)*64+8:(1+y)*64+20], src[((1+y)*w+2)*4:((1+y)*w+5)*4])
	}
	assert.Equal(t, want, append([]byte(nil), hb[:64*8]...))

	// All of c's layer 1 back through a 2D array and the from-array copy.
	d, err := rt.MallocArray(f, w, h, 0)
	require.NoError(t, err)
	defer rt.FreeArray(d) //nolint:errcheck
	toD := Memcpy3DParms{SrcArray: uintptr(c), SrcPos: Pos{Z: 1}, DstArray: uintptr(d), Extent: Extent{Width: w, Height: h, Depth: 1}, Kind: MemcpyDeviceToDevice}
	require.NoError(t, rt.Memcpy3DAsync(&toD, s))
	require.NoError(t, rt.Memcpy2DFromArrayAsync(uintptr(dp)+1024, w*4, d, 0, 0, w*4, h, MemcpyDeviceToDevice, s))
	clear(hb)
	require.NoError(t, rt.MemcpyAsync(uintptr(host), uintptr(dp)+1024, n, MemcpyDeviceToHost, s))
	require.NoError(t, rt.StreamSynchronize(s))
	assert.Equal(t, src, append([]byte(nil), hb[:n]...))

	// A box past the array's end is the runtime's error, and the stream stays usable.
	bad := Memcpy3DParms{SrcArray: uintptr(a), DstArray: uintptr(d), DstPos: Pos{X: 1}, Extent: Extent{Width: w, Height: h, Depth: 1}, Kind: MemcpyDeviceToDevice}
	err = rt.Memcpy3DAsync(&bad, s)
	_, ok := cudaerr.CodeOf(err)
	require.True(t, ok, "%v", err)
	require.NoError(t, rt.StreamSynchronize(s))
}

// Mipmapped arrays, their levels, and the sparse and deferred-mapping queries.
func TestGPUMipmappedAndSparseArrays(t *testing.T) {
	rt := gpuRuntime(t)
	f := cuda.Channels[float32](1)
	m, err := rt.MallocMipmappedArray(f, Extent{Width: 64, Height: 32}, 4, 0)
	require.NoError(t, err)
	defer rt.FreeMipmappedArray(m) //nolint:errcheck
	for i, want := range []Extent{{64, 32, 0}, {32, 16, 0}, {16, 8, 0}, {8, 4, 0}} {
		l, err := rt.GetMipmappedArrayLevel(m, uint32(i))
		require.NoError(t, err)
		_, e, _, err := rt.ArrayGetInfo(l)
		require.NoError(t, err)
		assert.Equal(t, want, e, "level %d", i)
	}
	_, err = rt.GetMipmappedArrayLevel(m, 4)
	require.Error(t, err)

	// More levels than halvings are clamped to 1+log2(64) = 7, the last 1×1.
	mc, err := rt.MallocMipmappedArray(f, Extent{Width: 64, Height: 32}, 10, 0)
	require.NoError(t, err)
	defer rt.FreeMipmappedArray(mc) //nolint:errcheck
	l6, err := rt.GetMipmappedArrayLevel(mc, 6)
	require.NoError(t, err)
	_, e6, _, err := rt.ArrayGetInfo(l6)
	require.NoError(t, err)
	t.Logf("level 6 of a 10-level 64×32 mipmap: %+v", e6)
	assert.Equal(t, Extent{Width: 1, Height: 1}, e6)
	_, err = rt.GetMipmappedArrayLevel(mc, 7)
	require.Error(t, err, "level 7 of a clamped 7-level mipmap")
	// The manual clamps 0 levels to 1 too; the simulator does so. Say what the GPU does.
	if m0, err := rt.MallocMipmappedArray(f, Extent{Width: 64, Height: 32}, 0, 0); err != nil {
		t.Logf("0 levels: %v", err)
	} else {
		_, err1 := rt.GetMipmappedArrayLevel(m0, 1)
		t.Logf("0 levels: made; level 1: %v", err1)
		rt.FreeMipmappedArray(m0) //nolint:errcheck
	}

	_, err = rt.ArrayGetPlane(backend.Array(0), 0)
	require.Error(t, err, "no plane of no array")

	sp, err := rt.Malloc3DArray(f, Extent{Width: 512, Height: 512}, backend.ArraySparse)
	if code, ok := cudaerr.CodeOf(err); ok && code == cudaerr.NotSupported {
		t.Skip("the device has no sparse arrays")
	}
	require.NoError(t, err)
	defer rt.FreeArray(sp) //nolint:errcheck
	props, err := rt.ArrayGetSparseProperties(sp)
	require.NoError(t, err)
	assert.Equal(t, uint64(64<<10), uint64(props.TileWidth)*uint64(props.TileHeight)*uint64(props.TileDepth)*4, "%+v", props)

	df, err := rt.Malloc3DArray(f, Extent{Width: 300, Height: 200}, backend.ArrayDeferredMapping)
	require.NoError(t, err)
	defer rt.FreeArray(df) //nolint:errcheck
	req, err := rt.ArrayGetMemoryRequirements(df, 0)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, req.Size, uint64(300*200*4))
	require.NotZero(t, req.Alignment)
	assert.Zero(t, req.Size%req.Alignment)

	ms, err := rt.MallocMipmappedArray(f, Extent{Width: 512, Height: 512}, 10, backend.ArraySparse)
	require.NoError(t, err)
	defer rt.FreeMipmappedArray(ms) //nolint:errcheck
	mp, err := rt.MipmappedArrayGetSparseProperties(ms)
	require.NoError(t, err)
	assert.Less(t, mp.MiptailFirstLevel, uint32(10))
	md, err := rt.MallocMipmappedArray(f, Extent{Width: 512, Height: 512}, 10, backend.ArrayDeferredMapping)
	require.NoError(t, err)
	defer rt.FreeMipmappedArray(md) //nolint:errcheck
	mr, err := rt.MipmappedArrayGetMemoryRequirements(md, 0)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, mr.Size, uint64(512*512*4))
}
