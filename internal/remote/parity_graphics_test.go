//go:build linux

package remote_test

import "github.com/gpuactor/gpuactor/internal/backend"

// Graphics interoperability (backend.GraphicsDevice) is refused by an isolated device: GL and
// EGL objects and the current GL context belong to the parent process (refuse_graphics.go).
func init() {
	refuse := func(name string, run func(dv backend.Device) error) {
		refusedRemotely[name] = struct {
			why string
			run func(dv backend.Device) error
		}{"GL and EGL objects and the current GL context are the parent's", run}
	}
	refuse("GLGetDevices", func(dv backend.Device) error { _, err := dv.GLGetDevices(backend.GLDeviceListAll, 4); return err })
	refuse("GraphicsGLRegisterBuffer", func(dv backend.Device) error { _, err := dv.GraphicsGLRegisterBuffer(1, 0); return err })
	refuse("GraphicsGLRegisterImage", func(dv backend.Device) error { _, err := dv.GraphicsGLRegisterImage(1, 0x0DE1, 0); return err })
	refuse("GraphicsEGLRegisterImage", func(dv backend.Device) error { _, err := dv.GraphicsEGLRegisterImage(0x1000, 0); return err })
	refuse("GraphicsUnregisterResource", func(dv backend.Device) error { return dv.GraphicsUnregisterResource(0x1000) })
	refuse("GraphicsResourceSetMapFlags", func(dv backend.Device) error { return dv.GraphicsResourceSetMapFlags(0x1000, 0) })
	refuse("GraphicsMapResources", func(dv backend.Device) error {
		return dv.GraphicsMapResources([]backend.GraphicsResource{0x1000}, 1)
	})
	refuse("GraphicsUnmapResources", func(dv backend.Device) error {
		return dv.GraphicsUnmapResources([]backend.GraphicsResource{0x1000}, 1)
	})
	refuse("GraphicsResourceMappedPointer", func(dv backend.Device) error {
		_, _, err := dv.GraphicsResourceMappedPointer(0x1000)
		return err
	})
	refuse("GraphicsSubResourceMappedArray", func(dv backend.Device) error {
		_, err := dv.GraphicsSubResourceMappedArray(0x1000, 0, 0)
		return err
	})
	refuse("GraphicsResourceMappedMipmappedArray", func(dv backend.Device) error {
		_, err := dv.GraphicsResourceMappedMipmappedArray(0x1000)
		return err
	})
	refuse("GraphicsResourceMappedEGLFrame", func(dv backend.Device) error {
		_, err := dv.GraphicsResourceMappedEGLFrame(0x1000, 0, 0)
		return err
	})
	refuse("EGLStreamConsumerConnect", func(dv backend.Device) error { _, err := dv.EGLStreamConsumerConnect(0x1000, 0); return err })
	refuse("EGLStreamConsumerDisconnect", func(dv backend.Device) error { return dv.EGLStreamConsumerDisconnect(0x1000) })
	refuse("EGLStreamConsumerAcquireFrame", func(dv backend.Device) error {
		_, err := dv.EGLStreamConsumerAcquireFrame(0x1000, 1, 0)
		return err
	})
	refuse("EGLStreamConsumerReleaseFrame", func(dv backend.Device) error { return dv.EGLStreamConsumerReleaseFrame(0x1000, 0x2000, 1) })
	refuse("EGLStreamProducerConnect", func(dv backend.Device) error { _, err := dv.EGLStreamProducerConnect(0x1000, 4, 4); return err })
	refuse("EGLStreamProducerDisconnect", func(dv backend.Device) error { return dv.EGLStreamProducerDisconnect(0x1000) })
	refuse("EGLStreamProducerPresentFrame", func(dv backend.Device) error {
		return dv.EGLStreamProducerPresentFrame(0x1000, backend.EGLFrame{}, 1)
	})
	refuse("EGLStreamProducerReturnFrame", func(dv backend.Device) error {
		_, err := dv.EGLStreamProducerReturnFrame(0x1000, 1)
		return err
	})
	refuse("EventCreateFromEGLSync", func(dv backend.Device) error { _, err := dv.EventCreateFromEGLSync(0x1000, 0); return err })
}
