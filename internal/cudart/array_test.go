package cudart

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
)

// The offsets of the array structs in the 13.0 headers on a 64-bit host: cudaMemcpy3DPeerParms
// pads each int device to 8; cudaArraySparseProperties puts its unsigned long long at 16;
// cudaChannelFormatDesc is five ints.
func TestArrayStructLayouts(t *testing.T) {
	var p Memcpy3DPeerParms
	for name, want := range map[string][2]uintptr{
		"srcArray":  {unsafe.Offsetof(p.SrcArray), 0},
		"srcPos":    {unsafe.Offsetof(p.SrcPos), 8},
		"srcPtr":    {unsafe.Offsetof(p.SrcPtr), 32},
		"srcDevice": {unsafe.Offsetof(p.SrcDevice), 64},
		"dstArray":  {unsafe.Offsetof(p.DstArray), 72},
		"dstPos":    {unsafe.Offsetof(p.DstPos), 80},
		"dstPtr":    {unsafe.Offsetof(p.DstPtr), 104},
		"dstDevice": {unsafe.Offsetof(p.DstDevice), 136},
		"extent":    {unsafe.Offsetof(p.Extent), 144},
	} {
		assert.Equal(t, want[1], want[0], name)
	}
	assert.Equal(t, uintptr(168), unsafe.Sizeof(p))

	var sp arraySparseProperties
	assert.Equal(t, uintptr(12), unsafe.Offsetof(sp.miptailFirstLevel))
	assert.Equal(t, uintptr(16), unsafe.Offsetof(sp.miptailSize))
	assert.Equal(t, uintptr(24), unsafe.Offsetof(sp.flags))
	assert.Equal(t, uintptr(48), unsafe.Sizeof(sp))
	assert.Equal(t, uintptr(32), unsafe.Sizeof(arrayMemoryRequirements{}))
	assert.Equal(t, uintptr(20), unsafe.Sizeof(cuda.ChannelFormat{}))
}

// Without a GPU every array call resolves its symbol and comes back with the runtime's error:
// the names are right and the by-value calls return.
func TestArrayCallsResolveWithoutAGPU(t *testing.T) {
	rt := mustLoad(t)
	if hasGPU() {
		t.Skip("a GPU: TestGPUArrayRoundTrip calls these for real")
	}
	f := cuda.Channels[float32](1)
	e := Extent{Width: 4, Height: 4, Depth: 4}
	calls := map[string]func() error{
		"MallocArray":   func() error { _, err := rt.MallocArray(f, 4, 4, 0); return err },
		"Malloc3DArray": func() error { _, err := rt.Malloc3DArray(f, e, 0); return err },
		"FreeArray":     func() error { return rt.FreeArray(0x1000) },
		"ArrayGetInfo":  func() error { _, _, _, err := rt.ArrayGetInfo(0x1000); return err },
		"GetChannelDesc": func() error {
			_, err := rt.GetChannelDesc(0x1000)
			return err
		},
		"ArrayGetPlane":        func() error { _, err := rt.ArrayGetPlane(0x1000, 0); return err },
		"MallocMipmappedArray": func() error { _, err := rt.MallocMipmappedArray(f, e, 2, 0); return err },
		"GetMipmappedArrayLevel": func() error {
			_, err := rt.GetMipmappedArrayLevel(0x1000, 0)
			return err
		},
		"FreeMipmappedArray": func() error { return rt.FreeMipmappedArray(0x1000) },
		"ArrayGetMemoryRequirements": func() error {
			_, err := rt.ArrayGetMemoryRequirements(0x1000, 0)
			return err
		},
		"MipmappedArrayGetMemoryRequirements": func() error {
			_, err := rt.MipmappedArrayGetMemoryRequirements(0x1000, 0)
			return err
		},
		"ArrayGetSparseProperties": func() error {
			_, err := rt.ArrayGetSparseProperties(0x1000)
			return err
		},
		"MipmappedArrayGetSparseProperties": func() error {
			_, err := rt.MipmappedArrayGetSparseProperties(0x1000)
			return err
		},
		"Memcpy3DPeerAsync": func() error { return rt.Memcpy3DPeerAsync(&Memcpy3DPeerParms{Extent: e}, 0) },
		"Memcpy2DToArrayAsync": func() error {
			return rt.Memcpy2DToArrayAsync(0x1000, 0, 0, 0x2000, 16, 16, 4, MemcpyDeviceToDevice, 0)
		},
		"Memcpy2DFromArrayAsync": func() error {
			return rt.Memcpy2DFromArrayAsync(0x2000, 16, 0x1000, 0, 0, 16, 4, MemcpyDeviceToDevice, 0)
		},
		"Memset3DAsync": func() error {
			return rt.Memset3DAsync(PitchedPtr{Ptr: 0x2000, Pitch: 512, XSize: 16, YSize: 4}, 0, Extent{Width: 16, Height: 4, Depth: 2}, 0)
		},
	}
	for name, call := range calls {
		err := call()
		require.Error(t, err, name)
		assert.NotErrorIs(t, err, ErrSymbolNotFound, name)
		_, ok := cudaerr.CodeOf(err)
		assert.True(t, ok, "%s: %v", name, err)
	}
}
