package cudart

import (
	"runtime"
	"structs"
	"unsafe"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Graphics interoperability (cuda_gl_interop.h, cuda_egl_interop.h and the graphics section
// of cuda_runtime_api.h). GL object names are GLuint, GL targets GLenum (both 32-bit); EGL
// images, streams and syncs are pointers. The GL calls need the GL context current on the
// calling thread, which is the caller's business (interop makes it current on the device's
// thread).
//
// A cudaEglStreamConnection is a pointer to the runtime's connection object; every stream
// call takes the address of a variable holding it. The runtime reads (and on disconnect may
// clear) the variable during the call and keeps no reference to it, so each call passes the
// address of a local copy of the connection.

// eglPlaneDesc is cudaEglPlaneDesc (56 bytes): five unsigned ints, a cudaChannelFormatDesc,
// four reserved unsigned ints.
type eglPlaneDesc struct {
	_                    structs.HostLayout
	width, height, depth uint32
	pitch                uint32
	numChannels          uint32
	channelDesc          cuda.ChannelFormat
	_                    [4]uint32
}

// eglPitchedPtr is struct cudaPitchedPtr (32 bytes).
type eglPitchedPtr struct {
	_                   structs.HostLayout
	ptr                 uintptr
	pitch, xsize, ysize uint64
}

// eglFrame is cudaEglFrame (280 bytes): a 96-byte union of three cudaArray_t or three
// cudaPitchedPtr, three plane descriptors, the plane count, the frame type and the color
// format, padded to the union's 8-byte alignment.
type eglFrame struct {
	_           structs.HostLayout
	frame       [backend.EGLMaxPlanes]eglPitchedPtr // the union as pPitch; arrays() reads it as pArray
	planes      [backend.EGLMaxPlanes]eglPlaneDesc
	planeCount  uint32
	frameType   uint32
	colorFormat uint32
	_           uint32
}

// arrays is the union read as cudaArray_t pArray[3]: three consecutive pointers from its
// start.
func (f *eglFrame) arrays() *[backend.EGLMaxPlanes]uintptr {
	return (*[backend.EGLMaxPlanes]uintptr)(unsafe.Pointer(&f.frame))
}

func (f *eglFrame) toBackend() backend.EGLFrame {
	out := backend.EGLFrame{PlaneCount: f.planeCount, Type: f.frameType, ColorFormat: f.colorFormat}
	a := f.arrays()
	for i := range backend.EGLMaxPlanes {
		p := f.planes[i]
		out.Planes[i] = backend.EGLPlane{Width: p.width, Height: p.height, Depth: p.depth, Pitch: p.pitch, Channels: p.numChannels, Format: p.channelDesc}
		if f.frameType == backend.EGLFrameArray {
			out.Arrays[i] = backend.Array(a[i])
		} else {
			q := f.frame[i]
			out.Pitched[i] = backend.EGLPitched{Ptr: DevicePtr(q.ptr), Pitch: q.pitch, XSize: q.xsize, YSize: q.ysize}
		}
	}
	return out
}

func eglFrameOf(in backend.EGLFrame) eglFrame {
	f := eglFrame{planeCount: in.PlaneCount, frameType: in.Type, colorFormat: in.ColorFormat}
	for i := range backend.EGLMaxPlanes {
		p := in.Planes[i]
		f.planes[i] = eglPlaneDesc{width: p.Width, height: p.Height, depth: p.Depth, pitch: p.Pitch, numChannels: p.Channels, channelDesc: p.Format}
		if in.Type != backend.EGLFrameArray {
			q := in.Pitched[i]
			f.frame[i] = eglPitchedPtr{ptr: uintptr(q.Ptr), pitch: q.Pitch, xsize: q.XSize, ysize: q.YSize}
		}
	}
	if in.Type == backend.EGLFrameArray {
		a := f.arrays()
		for i := range backend.EGLMaxPlanes {
			a[i] = uintptr(in.Arrays[i])
		}
	}
	return f
}

// GLGetDevices is the CUDA devices of the current GL context, at most max of them
// (cudaGLGetDevices).
func (r *Runtime) GLGetDevices(list uint32, max int) ([]int, error) {
	if max <= 0 {
		max = 1
	}
	devs := make([]int32, max)
	var n uint32
	err := r.call(fnGLGetDevices, uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&devs[0])), uintptr(max), uintptr(list))
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, min(int(n), max))
	for _, d := range devs[:min(int(n), max)] {
		out = append(out, int(d))
	}
	return out, nil
}

// GraphicsGLRegisterBuffer registers a GL buffer object (cudaGraphicsGLRegisterBuffer).
func (r *Runtime) GraphicsGLRegisterBuffer(buffer, flags uint32) (backend.GraphicsResource, error) {
	var res uintptr
	err := r.call(fnGraphicsGLRegisterBuffer, uintptr(unsafe.Pointer(&res)), uintptr(buffer), uintptr(flags))
	return backend.GraphicsResource(res), err
}

// GraphicsGLRegisterImage registers a GL texture or renderbuffer (cudaGraphicsGLRegisterImage).
func (r *Runtime) GraphicsGLRegisterImage(image, target, flags uint32) (backend.GraphicsResource, error) {
	var res uintptr
	err := r.call(fnGraphicsGLRegisterImage, uintptr(unsafe.Pointer(&res)), uintptr(image), uintptr(target), uintptr(flags))
	return backend.GraphicsResource(res), err
}

// GraphicsEGLRegisterImage registers an EGLImageKHR (cudaGraphicsEGLRegisterImage).
func (r *Runtime) GraphicsEGLRegisterImage(image uintptr, flags uint32) (backend.GraphicsResource, error) {
	var res uintptr
	err := r.call(fnGraphicsEGLRegisterImage, uintptr(unsafe.Pointer(&res)), image, uintptr(flags))
	return backend.GraphicsResource(res), err
}

// GraphicsUnregisterResource unregisters a resource (cudaGraphicsUnregisterResource).
func (r *Runtime) GraphicsUnregisterResource(res backend.GraphicsResource) error {
	return r.call(fnGraphicsUnregisterResource, uintptr(res))
}

// GraphicsResourceSetMapFlags sets a resource's map flags (cudaGraphicsResourceSetMapFlags).
func (r *Runtime) GraphicsResourceSetMapFlags(res backend.GraphicsResource, flags uint32) error {
	return r.call(fnGraphicsResourceSetMapFlags, uintptr(res), uintptr(flags))
}

// GraphicsMapResources maps resources on s (cudaGraphicsMapResources).
func (r *Runtime) GraphicsMapResources(rs []backend.GraphicsResource, s Stream) error {
	return r.mapResources(fnGraphicsMapResources, rs, s)
}

// GraphicsUnmapResources unmaps resources on s (cudaGraphicsUnmapResources).
func (r *Runtime) GraphicsUnmapResources(rs []backend.GraphicsResource, s Stream) error {
	return r.mapResources(fnGraphicsUnmapResources, rs, s)
}

func (r *Runtime) mapResources(id int, rs []backend.GraphicsResource, s Stream) error {
	if len(rs) == 0 {
		return nil
	}
	err := r.call(id, uintptr(len(rs)), uintptr(unsafe.Pointer(&rs[0])), uintptr(s))
	runtime.KeepAlive(rs)
	return err
}

// GraphicsResourceGetMappedPointer is a mapped buffer's address and size
// (cudaGraphicsResourceGetMappedPointer).
func (r *Runtime) GraphicsResourceGetMappedPointer(res backend.GraphicsResource) (DevicePtr, uint64, error) {
	var p uintptr
	var size uint64
	err := r.call(fnGraphicsResourceGetMappedPointer, uintptr(unsafe.Pointer(&p)), uintptr(unsafe.Pointer(&size)), uintptr(res))
	return DevicePtr(p), size, err
}

// GraphicsSubResourceGetMappedArray is one array of a mapped image
// (cudaGraphicsSubResourceGetMappedArray).
func (r *Runtime) GraphicsSubResourceGetMappedArray(res backend.GraphicsResource, index, level uint32) (backend.Array, error) {
	var a uintptr
	err := r.call(fnGraphicsSubResourceGetMappedArray, uintptr(unsafe.Pointer(&a)), uintptr(res), uintptr(index), uintptr(level))
	return backend.Array(a), err
}

// GraphicsResourceGetMappedMipmappedArray is a mapped image as a mipmapped array
// (cudaGraphicsResourceGetMappedMipmappedArray).
func (r *Runtime) GraphicsResourceGetMappedMipmappedArray(res backend.GraphicsResource) (backend.MipmappedArray, error) {
	var m uintptr
	err := r.call(fnGraphicsResourceGetMappedMipmappedArray, uintptr(unsafe.Pointer(&m)), uintptr(res))
	return backend.MipmappedArray(m), err
}

// GraphicsResourceGetMappedEglFrame is a mapped EGL resource as a frame
// (cudaGraphicsResourceGetMappedEglFrame).
func (r *Runtime) GraphicsResourceGetMappedEglFrame(res backend.GraphicsResource, index, level uint32) (backend.EGLFrame, error) {
	var f eglFrame
	err := r.call(fnGraphicsResourceGetMappedEglFrame, uintptr(unsafe.Pointer(&f)), uintptr(res), uintptr(index), uintptr(level))
	return f.toBackend(), err
}

// EGLStreamConsumerConnect connects CUDA as an EGL stream's consumer
// (cudaEGLStreamConsumerConnectWithFlags, or cudaEGLStreamConsumerConnect when flags is
// EGLConsumerDefault).
func (r *Runtime) EGLStreamConsumerConnect(stream uintptr, flags uint32) (backend.EGLStreamConnection, error) {
	var c uintptr
	var err error
	if flags == EGLConsumerDefault {
		err = r.call(fnEGLStreamConsumerConnect, uintptr(unsafe.Pointer(&c)), stream)
	} else {
		err = r.call(fnEGLStreamConsumerConnectWithFlags, uintptr(unsafe.Pointer(&c)), stream, uintptr(flags))
	}
	return backend.EGLStreamConnection(c), err
}

// EGLConsumerDefault asks EGLStreamConsumerConnect for cudaEGLStreamConsumerConnect, which
// takes no location.
const EGLConsumerDefault = ^uint32(0)

// EGLStreamConsumerDisconnect disconnects a consumer (cudaEGLStreamConsumerDisconnect).
func (r *Runtime) EGLStreamConsumerDisconnect(c backend.EGLStreamConnection) error {
	conn := uintptr(c)
	return r.call(fnEGLStreamConsumerDisconnect, uintptr(unsafe.Pointer(&conn)))
}

// EGLStreamConsumerAcquireFrame acquires a frame (cudaEGLStreamConsumerAcquireFrame).
func (r *Runtime) EGLStreamConsumerAcquireFrame(c backend.EGLStreamConnection, s Stream, timeout uint32) (backend.GraphicsResource, error) {
	conn, st := uintptr(c), uintptr(s)
	var res uintptr
	err := r.call(fnEGLStreamConsumerAcquireFrame, uintptr(unsafe.Pointer(&conn)), uintptr(unsafe.Pointer(&res)), uintptr(unsafe.Pointer(&st)), uintptr(timeout))
	return backend.GraphicsResource(res), err
}

// EGLStreamConsumerReleaseFrame releases an acquired frame (cudaEGLStreamConsumerReleaseFrame).
func (r *Runtime) EGLStreamConsumerReleaseFrame(c backend.EGLStreamConnection, res backend.GraphicsResource, s Stream) error {
	conn, st := uintptr(c), uintptr(s)
	return r.call(fnEGLStreamConsumerReleaseFrame, uintptr(unsafe.Pointer(&conn)), uintptr(res), uintptr(unsafe.Pointer(&st)))
}

// EGLStreamProducerConnect connects CUDA as an EGL stream's producer
// (cudaEGLStreamProducerConnect).
func (r *Runtime) EGLStreamProducerConnect(stream uintptr, width, height int32) (backend.EGLStreamConnection, error) {
	var c uintptr
	err := r.call(fnEGLStreamProducerConnect, uintptr(unsafe.Pointer(&c)), stream, uintptr(uint32(width)), uintptr(uint32(height)))
	return backend.EGLStreamConnection(c), err
}

// EGLStreamProducerDisconnect disconnects a producer (cudaEGLStreamProducerDisconnect).
func (r *Runtime) EGLStreamProducerDisconnect(c backend.EGLStreamConnection) error {
	conn := uintptr(c)
	return r.call(fnEGLStreamProducerDisconnect, uintptr(unsafe.Pointer(&conn)))
}

// EGLStreamProducerPresentFrame presents a frame (cudaEGLStreamProducerPresentFrame). The
// frame travels by value: see presentFrame.
func (r *Runtime) EGLStreamProducerPresentFrame(c backend.EGLStreamConnection, in backend.EGLFrame, s Stream) error {
	fn, err := r.syms.get(fnEGLStreamProducerPresentFrame)
	if err != nil {
		return err
	}
	// On the heap, where nothing moves: presentFrame passes their addresses as plain words.
	conn, st, f := new(uintptr), new(uintptr), new(eglFrame)
	*conn, *st, *f = uintptr(c), uintptr(s), eglFrameOf(in)
	code := presentFrame(fn, conn, f, st)
	runtime.KeepAlive(conn)
	runtime.KeepAlive(st)
	runtime.KeepAlive(f)
	return r.newError(runtimeSymNames[fnEGLStreamProducerPresentFrame], code)
}

// EGLStreamProducerReturnFrame takes back a released frame (cudaEGLStreamProducerReturnFrame).
func (r *Runtime) EGLStreamProducerReturnFrame(c backend.EGLStreamConnection, s Stream) (backend.EGLFrame, error) {
	conn, st := uintptr(c), uintptr(s)
	var f eglFrame
	err := r.call(fnEGLStreamProducerReturnFrame, uintptr(unsafe.Pointer(&conn)), uintptr(unsafe.Pointer(&f)), uintptr(unsafe.Pointer(&st)))
	return f.toBackend(), err
}

// EventCreateFromEGLSync makes an event of an EGLSyncKHR (cudaEventCreateFromEGLSync).
func (r *Runtime) EventCreateFromEGLSync(sync uintptr, flags uint32) (Event, error) {
	var e uintptr
	err := r.call(fnEventCreateFromEGLSync, uintptr(unsafe.Pointer(&e)), sync, uintptr(flags))
	return Event(e), err
}
