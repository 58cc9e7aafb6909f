package cudart

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// The EGL frame layout, against cuda_egl_interop.h: cudaEglPlaneDesc is 56 bytes (five
// unsigned ints, the 20-byte channel descriptor, four reserved), cudaEglFrame 280 (a 96-byte
// union of three cudaPitchedPtr, three plane descriptors, three 4-byte fields, padding).
func TestEGLFrameLayout(t *testing.T) {
	assert.EqualValues(t, 56, unsafe.Sizeof(eglPlaneDesc{}))
	assert.EqualValues(t, 20, unsafe.Offsetof(eglPlaneDesc{}.channelDesc))
	assert.EqualValues(t, 32, unsafe.Sizeof(eglPitchedPtr{}))
	var f eglFrame
	assert.EqualValues(t, 280, unsafe.Sizeof(f))
	assert.EqualValues(t, 96, unsafe.Offsetof(f.planes))
	assert.EqualValues(t, 264, unsafe.Offsetof(f.planeCount))
	assert.EqualValues(t, 268, unsafe.Offsetof(f.frameType))
	assert.EqualValues(t, 272, unsafe.Offsetof(f.colorFormat))
}

// A frame goes to the C layout and back unchanged, for both kinds of plane; array handles
// sit in the union's first three words.
func TestEGLFrameRoundTrip(t *testing.T) {
	plane := backend.EGLPlane{Width: 64, Height: 32, Depth: 1, Pitch: 256, Channels: 4, Format: cuda.Channels[uint8](4)}
	arr := backend.EGLFrame{Arrays: [3]backend.Array{0x10, 0x20, 0x30}, Planes: [3]backend.EGLPlane{plane, plane}, PlaneCount: 2, Type: backend.EGLFrameArray, ColorFormat: 7}
	c := eglFrameOf(arr)
	assert.Equal(t, [3]uintptr{0x10, 0x20, 0x30}, *c.arrays())
	assert.Equal(t, arr, c.toBackend())

	pit := backend.EGLFrame{Pitched: [3]backend.EGLPitched{{Ptr: 0x1000, Pitch: 256, XSize: 64, YSize: 32}}, Planes: [3]backend.EGLPlane{plane}, PlaneCount: 1, Type: backend.EGLFramePitch}
	c = eglFrameOf(pit)
	assert.Equal(t, pit, c.toBackend())
}
