package cudart

import "github.com/gpuactor/gpuactor/internal/backend"

func (d *device) GLGetDevices(list uint32, max int) ([]int, error) {
	return d.rt.GLGetDevices(list, max)
}

func (d *device) GraphicsGLRegisterBuffer(buffer, flags uint32) (backend.GraphicsResource, error) {
	return d.rt.GraphicsGLRegisterBuffer(buffer, flags)
}

func (d *device) GraphicsGLRegisterImage(image, target, flags uint32) (backend.GraphicsResource, error) {
	return d.rt.GraphicsGLRegisterImage(image, target, flags)
}

func (d *device) GraphicsEGLRegisterImage(image uintptr, flags uint32) (backend.GraphicsResource, error) {
	return d.rt.GraphicsEGLRegisterImage(image, flags)
}

func (d *device) GraphicsUnregisterResource(r backend.GraphicsResource) error {
	return d.rt.GraphicsUnregisterResource(r)
}

func (d *device) GraphicsResourceSetMapFlags(r backend.GraphicsResource, flags uint32) error {
	return d.rt.GraphicsResourceSetMapFlags(r, flags)
}

func (d *device) GraphicsMapResources(rs []backend.GraphicsResource, s Stream) error {
	return d.rt.GraphicsMapResources(rs, s)
}

func (d *device) GraphicsUnmapResources(rs []backend.GraphicsResource, s Stream) error {
	return d.rt.GraphicsUnmapResources(rs, s)
}

func (d *device) GraphicsResourceMappedPointer(r backend.GraphicsResource) (DevicePtr, uint64, error) {
	return d.rt.GraphicsResourceGetMappedPointer(r)
}

func (d *device) GraphicsSubResourceMappedArray(r backend.GraphicsResource, index, level uint32) (backend.Array, error) {
	return d.rt.GraphicsSubResourceGetMappedArray(r, index, level)
}

func (d *device) GraphicsResourceMappedMipmappedArray(r backend.GraphicsResource) (backend.MipmappedArray, error) {
	return d.rt.GraphicsResourceGetMappedMipmappedArray(r)
}

func (d *device) GraphicsResourceMappedEGLFrame(r backend.GraphicsResource, index, level uint32) (backend.EGLFrame, error) {
	return d.rt.GraphicsResourceGetMappedEglFrame(r, index, level)
}

func (d *device) EGLStreamConsumerConnect(stream uintptr, flags uint32) (backend.EGLStreamConnection, error) {
	return d.rt.EGLStreamConsumerConnect(stream, flags)
}

func (d *device) EGLStreamConsumerDisconnect(c backend.EGLStreamConnection) error {
	return d.rt.EGLStreamConsumerDisconnect(c)
}

func (d *device) EGLStreamConsumerAcquireFrame(c backend.EGLStreamConnection, s Stream, timeout uint32) (backend.GraphicsResource, error) {
	return d.rt.EGLStreamConsumerAcquireFrame(c, s, timeout)
}

func (d *device) EGLStreamConsumerReleaseFrame(c backend.EGLStreamConnection, r backend.GraphicsResource, s Stream) error {
	return d.rt.EGLStreamConsumerReleaseFrame(c, r, s)
}

func (d *device) EGLStreamProducerConnect(stream uintptr, width, height int32) (backend.EGLStreamConnection, error) {
	return d.rt.EGLStreamProducerConnect(stream, width, height)
}

func (d *device) EGLStreamProducerDisconnect(c backend.EGLStreamConnection) error {
	return d.rt.EGLStreamProducerDisconnect(c)
}

func (d *device) EGLStreamProducerPresentFrame(c backend.EGLStreamConnection, f backend.EGLFrame, s Stream) error {
	return d.rt.EGLStreamProducerPresentFrame(c, f, s)
}

func (d *device) EGLStreamProducerReturnFrame(c backend.EGLStreamConnection, s Stream) (backend.EGLFrame, error) {
	return d.rt.EGLStreamProducerReturnFrame(c, s)
}

func (d *device) EventCreateFromEGLSync(sync uintptr, flags uint32) (Event, error) {
	return d.rt.EventCreateFromEGLSync(sync, flags)
}

var _ backend.GraphicsDevice = (*device)(nil)
