package remote

import "github.com/gpuactor/gpuactor/internal/backend"

// Graphics interoperability is refused on an isolated device: its arguments are objects of
// the parent process (GL buffer and texture names of the parent's GL context, EGL images,
// streams and syncs of the parent's EGL display), and the GL calls need that context current
// on the calling thread. The worker has no GL context and could not share the parent's: a GL
// context belongs to one process.

const graphicsWhy = "GL and EGL objects and the current GL context belong to this process; the worker has none: use an in-process device for graphics interoperability"

func (d *Device) GLGetDevices(uint32, int) ([]int, error) {
	return nil, refuseWhy("GLGetDevices", graphicsWhy)
}

func (d *Device) GraphicsGLRegisterBuffer(uint32, uint32) (backend.GraphicsResource, error) {
	return 0, refuseWhy("GraphicsGLRegisterBuffer", graphicsWhy)
}

func (d *Device) GraphicsGLRegisterImage(uint32, uint32, uint32) (backend.GraphicsResource, error) {
	return 0, refuseWhy("GraphicsGLRegisterImage", graphicsWhy)
}

func (d *Device) GraphicsEGLRegisterImage(uintptr, uint32) (backend.GraphicsResource, error) {
	return 0, refuseWhy("GraphicsEGLRegisterImage", graphicsWhy)
}

func (d *Device) GraphicsUnregisterResource(backend.GraphicsResource) error {
	return refuseWhy("GraphicsUnregisterResource", graphicsWhy)
}

func (d *Device) GraphicsResourceSetMapFlags(backend.GraphicsResource, uint32) error {
	return refuseWhy("GraphicsResourceSetMapFlags", graphicsWhy)
}

func (d *Device) GraphicsMapResources([]backend.GraphicsResource, backend.Stream) error {
	return refuseWhy("GraphicsMapResources", graphicsWhy)
}

func (d *Device) GraphicsUnmapResources([]backend.GraphicsResource, backend.Stream) error {
	return refuseWhy("GraphicsUnmapResources", graphicsWhy)
}

func (d *Device) GraphicsResourceMappedPointer(backend.GraphicsResource) (backend.DevicePtr, uint64, error) {
	return 0, 0, refuseWhy("GraphicsResourceMappedPointer", graphicsWhy)
}

func (d *Device) GraphicsSubResourceMappedArray(backend.GraphicsResource, uint32, uint32) (backend.Array, error) {
	return 0, refuseWhy("GraphicsSubResourceMappedArray", graphicsWhy)
}

func (d *Device) GraphicsResourceMappedMipmappedArray(backend.GraphicsResource) (backend.MipmappedArray, error) {
	return 0, refuseWhy("GraphicsResourceMappedMipmappedArray", graphicsWhy)
}

func (d *Device) GraphicsResourceMappedEGLFrame(backend.GraphicsResource, uint32, uint32) (backend.EGLFrame, error) {
	return backend.EGLFrame{}, refuseWhy("GraphicsResourceMappedEGLFrame", graphicsWhy)
}

func (d *Device) EGLStreamConsumerConnect(uintptr, uint32) (backend.EGLStreamConnection, error) {
	return 0, refuseWhy("EGLStreamConsumerConnect", graphicsWhy)
}

func (d *Device) EGLStreamConsumerDisconnect(backend.EGLStreamConnection) error {
	return refuseWhy("EGLStreamConsumerDisconnect", graphicsWhy)
}

func (d *Device) EGLStreamConsumerAcquireFrame(backend.EGLStreamConnection, backend.Stream, uint32) (backend.GraphicsResource, error) {
	return 0, refuseWhy("EGLStreamConsumerAcquireFrame", graphicsWhy)
}

func (d *Device) EGLStreamConsumerReleaseFrame(backend.EGLStreamConnection, backend.GraphicsResource, backend.Stream) error {
	return refuseWhy("EGLStreamConsumerReleaseFrame", graphicsWhy)
}

func (d *Device) EGLStreamProducerConnect(uintptr, int32, int32) (backend.EGLStreamConnection, error) {
	return 0, refuseWhy("EGLStreamProducerConnect", graphicsWhy)
}

func (d *Device) EGLStreamProducerDisconnect(backend.EGLStreamConnection) error {
	return refuseWhy("EGLStreamProducerDisconnect", graphicsWhy)
}

func (d *Device) EGLStreamProducerPresentFrame(backend.EGLStreamConnection, backend.EGLFrame, backend.Stream) error {
	return refuseWhy("EGLStreamProducerPresentFrame", graphicsWhy)
}

func (d *Device) EGLStreamProducerReturnFrame(backend.EGLStreamConnection, backend.Stream) (backend.EGLFrame, error) {
	return backend.EGLFrame{}, refuseWhy("EGLStreamProducerReturnFrame", graphicsWhy)
}

func (d *Device) EventCreateFromEGLSync(uintptr, uint32) (backend.Event, error) {
	return 0, refuseWhy("EventCreateFromEGLSync", graphicsWhy)
}
