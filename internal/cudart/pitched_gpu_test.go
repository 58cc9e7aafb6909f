package cudart

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// A 3D box of a pitched allocation through cudaMemcpy3DAsync, with 2D copies and memsets
// around it: the Memcpy3DParms layout is wrong if any element lands elsewhere.
func TestGPUPitched3D(t *testing.T) {
	rt := gpuRuntime(t)
	const w, h, d = 100, 6, 3 // bytes per row, rows per slice, slices
	p, pitch, err := rt.MallocPitch(w, h*d)
	require.NoError(t, err)
	defer rt.Free(p) //nolint:errcheck
	require.GreaterOrEqual(t, pitch, uint64(w))
	s, err := rt.StreamCreateWithPriority(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	defer rt.StreamDestroy(s) //nolint:errcheck

	host, err := rt.HostAlloc(w*h*d, backend.HostAllocDefault)
	require.NoError(t, err)
	defer rt.FreeHost(host) //nolint:errcheck
	hb := unsafe.Slice((*byte)(host), w*h*d)
	for i := range hb {
		hb[i] = byte(i*7 + 1)
	}
	want := append([]byte(nil), hb...)
	require.NoError(t, rt.Memcpy2DAsync(uintptr(p), pitch, uintptr(host), w, w, h*d, MemcpyHostToDevice, s))
	require.NoError(t, rt.StreamSynchronize(s))

	// A 5-byte × 2-row × 2-slice box at (10, 3, 1) to the host, packed.
	out, err := rt.HostAlloc(20, backend.HostAllocDefault)
	require.NoError(t, err)
	defer rt.FreeHost(out) //nolint:errcheck
	parms := Memcpy3DParms{
		SrcPos: Pos{X: 10, Y: 3, Z: 1},
		SrcPtr: PitchedPtr{Ptr: uintptr(p), Pitch: pitch, XSize: w, YSize: h},
		DstPtr: PitchedPtr{Ptr: uintptr(out), Pitch: 5, XSize: 5, YSize: 2},
		Extent: Extent{Width: 5, Height: 2, Depth: 2},
		Kind:   MemcpyDeviceToHost,
	}
	require.NoError(t, rt.Memcpy3DAsync(&parms, s))
	require.NoError(t, rt.StreamSynchronize(s))
	var box []byte
	for z := 1; z < 3; z++ {
		for y := 3; y < 5; y++ {
			at := (z*h+y)*w + 10
			box = append(box, want[at:at+5]...)
		}
	}
	assert.Equal(t, box, unsafe.Slice((*byte)(out), 20))

	// A 2D memset of columns 0..3 of every row, read back whole.
	require.NoError(t, rt.Memset2DAsync(p, pitch, 0xEE, 4, h*d, s))
	clear(hb)
	require.NoError(t, rt.Memcpy2DAsync(uintptr(host), w, uintptr(p), pitch, w, h*d, MemcpyDeviceToHost, s))
	require.NoError(t, rt.StreamSynchronize(s))
	for y := range h * d {
		copy(want[y*w:], []byte{0xEE, 0xEE, 0xEE, 0xEE})
	}
	assert.Equal(t, want, hb)

	// A row wider than the pitch is the runtime's error, and the stream stays usable.
	err = rt.Memcpy2DAsync(uintptr(p), w-1, uintptr(host), w, w, 1, MemcpyHostToDevice, s)
	c, ok := cudaerr.CodeOf(err)
	require.True(t, ok, "%v", err)
	assert.Contains(t, []cudaerr.Code{cudaerr.InvalidPitchValue, cudaerr.InvalidValue}, c)
	require.NoError(t, rt.StreamSynchronize(s))
}
