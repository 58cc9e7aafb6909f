package cudart

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"

	"github.com/gpuactor/gpuactor/cuda"
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
