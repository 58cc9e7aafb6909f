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

// Every graphics call resolves in the loaded runtime and comes back as an error value from it
// where there is no GPU (no driver, or no device), not a crash: the argument words reach the
// library, the by-value frame of PresentFrame through the stack trampoline included. On a GPU
// the bogus handles are refused instead.
func TestGraphicsCallsReachTheRuntime(t *testing.T) {
	rt := mustLoad(t)
	if n, err := rt.GetDeviceCount(); err == nil && n > 0 {
		t.Skip("a GPU is present: the interop GPU tests call these for real")
	}
	plane := backend.EGLPlane{Width: 4, Height: 4, Channels: 4, Format: cuda.Channels[uint8](4)}
	frame := backend.EGLFrame{Arrays: [3]backend.Array{0x10}, Planes: [3]backend.EGLPlane{plane}, PlaneCount: 1, Type: backend.EGLFrameArray, ColorFormat: 7}
	calls := map[string]func() error{
		"cudaGLGetDevices":                            func() error { _, err := rt.GLGetDevices(backend.GLDeviceListAll, 4); return err },
		"cudaGraphicsGLRegisterBuffer":                func() error { _, err := rt.GraphicsGLRegisterBuffer(1, 0); return err },
		"cudaGraphicsGLRegisterImage":                 func() error { _, err := rt.GraphicsGLRegisterImage(1, 0x0DE1, 0); return err },
		"cudaGraphicsEGLRegisterImage":                func() error { _, err := rt.GraphicsEGLRegisterImage(0, 0); return err },
		"cudaGraphicsMapResources":                    func() error { return rt.GraphicsMapResources([]backend.GraphicsResource{0}, 0) },
		"cudaGraphicsResourceGetMappedPointer":        func() error { _, _, err := rt.GraphicsResourceGetMappedPointer(0); return err },
		"cudaGraphicsResourceGetMappedEglFrame":       func() error { _, err := rt.GraphicsResourceGetMappedEglFrame(0, 0, 0); return err },
		"cudaEGLStreamConsumerConnect":                func() error { _, err := rt.EGLStreamConsumerConnect(0, EGLConsumerDefault); return err },
		"cudaEGLStreamConsumerConnectWithFlags":       func() error { _, err := rt.EGLStreamConsumerConnect(0, backend.EGLResourceVidmem); return err },
		"cudaEGLStreamProducerConnect":                func() error { _, err := rt.EGLStreamProducerConnect(0, 4, 4); return err },
		"cudaEGLStreamProducerPresentFrame":           func() error { return rt.EGLStreamProducerPresentFrame(0, frame, 0) },
		"cudaEventCreateFromEGLSync":                  func() error { _, err := rt.EventCreateFromEGLSync(0, 0); return err },
		"cudaGraphicsResourceGetMappedMipmappedArray": func() error { _, err := rt.GraphicsResourceGetMappedMipmappedArray(0); return err },
	}
	for name, call := range calls {
		err := call()
		require.Error(t, err, name)
		var ce *cudaerr.Error
		require.ErrorAs(t, err, &ce, "%s: %v", name, err)
		assert.Equal(t, name, ce.Op)
		t.Logf("%s: %v", name, ce.Code)
	}
}
