package cudart

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// The offsets of struct cudaMemcpy3DParms in the 13.0 header on a 64-bit host: three size_t
// in cudaPos and cudaExtent, four words in cudaPitchedPtr, an int enum padded to 8.
func TestMemcpy3DParmsLayout(t *testing.T) {
	var p Memcpy3DParms
	assert.Equal(t, uintptr(24), unsafe.Sizeof(Pos{}))
	assert.Equal(t, uintptr(32), unsafe.Sizeof(PitchedPtr{}))
	assert.Equal(t, uintptr(24), unsafe.Sizeof(Extent{}))
	for name, want := range map[string][2]uintptr{
		"srcArray": {unsafe.Offsetof(p.SrcArray), 0},
		"srcPos":   {unsafe.Offsetof(p.SrcPos), 8},
		"srcPtr":   {unsafe.Offsetof(p.SrcPtr), 32},
		"dstArray": {unsafe.Offsetof(p.DstArray), 64},
		"dstPos":   {unsafe.Offsetof(p.DstPos), 72},
		"dstPtr":   {unsafe.Offsetof(p.DstPtr), 96},
		"extent":   {unsafe.Offsetof(p.Extent), 128},
		"kind":     {unsafe.Offsetof(p.Kind), 152},
	} {
		assert.Equal(t, want[1], want[0], name)
	}
	assert.Equal(t, uintptr(160), unsafe.Sizeof(p))
}
