package sim

import (
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// The simulator has no OpenGL or EGL: there is no GL context to be current, no GL object to
// register and no EGL display. Every graphics interoperability call fails with
// cudaErrorNotSupported and leaves the device as it was (the error is not sticky), as a
// runtime does on a machine without a graphics driver.

// graphicsNotSupported is the error of graphics interoperability call op.
func (d *device) graphicsNotSupported(op string) error {
	if err := d.alive(op); err != nil {
		return err
	}
	return d.fail(op, cudaerr.NotSupported, "graphics interoperability is not simulated: the simulator has no OpenGL or EGL")
}

func (d *device) GLGetDevices(uint32, int) ([]int, error) {
	return nil, d.graphicsNotSupported("cudaGLGetDevices")
}

func (d *device) GraphicsGLRegisterBuffer(uint32, uint32) (backend.GraphicsResource, error) {
	return 0, d.graphicsNotSupported("cudaGraphicsGLRegisterBuffer")
}

func (d *device) GraphicsGLRegisterImage(uint32, uint32, uint32) (backend.GraphicsResource, error) {
	return 0, d.graphicsNotSupported("cudaGraphicsGLRegisterImage")
}

func (d *device) GraphicsEGLRegisterImage(uintptr, uint32) (backend.GraphicsResource, error) {
	return 0, d.graphicsNotSupported("cudaGraphicsEGLRegisterImage")
}

func (d *device) GraphicsUnregisterResource(backend.GraphicsResource) error {
	return d.graphicsNotSupported("cudaGraphicsUnregisterResource")
}

func (d *device) GraphicsResourceSetMapFlags(backend.GraphicsResource, uint32) error {
	return d.graphicsNotSupported("cudaGraphicsResourceSetMapFlags")
}

func (d *device) GraphicsMapResources([]backend.GraphicsResource, backend.Stream) error {
	return d.graphicsNotSupported("cudaGraphicsMapResources")
}

func (d *device) GraphicsUnmapResources([]backend.GraphicsResource, backend.Stream) error {
	return d.graphicsNotSupported("cudaGraphicsUnmapResources")
}

func (d *device) GraphicsResourceMappedPointer(backend.GraphicsResource) (backend.DevicePtr, uint64, error) {
	return 0, 0, d.graphicsNotSupported("cudaGraphicsResourceGetMappedPointer")
}

func (d *device) GraphicsSubResourceMappedArray(backend.GraphicsResource, uint32, uint32) (backend.Array, error) {
	return 0, d.graphicsNotSupported("cudaGraphicsSubResourceGetMappedArray")
}

func (d *device) GraphicsResourceMappedMipmappedArray(backend.GraphicsResource) (backend.MipmappedArray, error) {
	return 0, d.graphicsNotSupported("cudaGraphicsResourceGetMappedMipmappedArray")
}

func (d *device) GraphicsResourceMappedEGLFrame(backend.GraphicsResource, uint32, uint32) (backend.EGLFrame, error) {
	return backend.EGLFrame{}, d.graphicsNotSupported("cudaGraphicsResourceGetMappedEglFrame")
}

func (d *device) EGLStreamConsumerConnect(uintptr, uint32) (backend.EGLStreamConnection, error) {
	return 0, d.graphicsNotSupported("cudaEGLStreamConsumerConnectWithFlags")
}

func (d *device) EGLStreamConsumerDisconnect(backend.EGLStreamConnection) error {
	return d.graphicsNotSupported("cudaEGLStreamConsumerDisconnect")
}

func (d *device) EGLStreamConsumerAcquireFrame(backend.EGLStreamConnection, backend.Stream, uint32) (backend.GraphicsResource, error) {
	return 0, d.graphicsNotSupported("cudaEGLStreamConsumerAcquireFrame")
}

func (d *device) EGLStreamConsumerReleaseFrame(backend.EGLStreamConnection, backend.GraphicsResource, backend.Stream) error {
	return d.graphicsNotSupported("cudaEGLStreamConsumerReleaseFrame")
}

func (d *device) EGLStreamProducerConnect(uintptr, int32, int32) (backend.EGLStreamConnection, error) {
	return 0, d.graphicsNotSupported("cudaEGLStreamProducerConnect")
}

func (d *device) EGLStreamProducerDisconnect(backend.EGLStreamConnection) error {
	return d.graphicsNotSupported("cudaEGLStreamProducerDisconnect")
}

func (d *device) EGLStreamProducerPresentFrame(backend.EGLStreamConnection, backend.EGLFrame, backend.Stream) error {
	return d.graphicsNotSupported("cudaEGLStreamProducerPresentFrame")
}

func (d *device) EGLStreamProducerReturnFrame(backend.EGLStreamConnection, backend.Stream) (backend.EGLFrame, error) {
	return backend.EGLFrame{}, d.graphicsNotSupported("cudaEGLStreamProducerReturnFrame")
}

func (d *device) EventCreateFromEGLSync(uintptr, uint32) (backend.Event, error) {
	return 0, d.graphicsNotSupported("cudaEventCreateFromEGLSync")
}

var _ backend.GraphicsDevice = (*device)(nil)
