package backend

// GraphicsResource is an opaque cudaGraphicsResource_t handle: an OpenGL buffer or image, or
// an EGL image or stream frame, registered with CUDA.
type GraphicsResource uintptr

// EGLStreamConnection names one CUDA end (consumer or producer) of an EGL stream
// (cudaEglStreamConnection). The backend keeps the runtime's connection object; the value
// only names it.
type EGLStreamConnection uintptr

// Graphics register flags (cudaGraphicsRegisterFlags*), as the runtime defines them.
const (
	GraphicsRegisterNone             uint32 = 0
	GraphicsRegisterReadOnly         uint32 = 1
	GraphicsRegisterWriteDiscard     uint32 = 2
	GraphicsRegisterSurfaceLoadStore uint32 = 4
	GraphicsRegisterTextureGather    uint32 = 8
)

// Graphics map flags (cudaGraphicsMapFlags*), as the runtime defines them.
const (
	GraphicsMapNone         uint32 = 0
	GraphicsMapReadOnly     uint32 = 1
	GraphicsMapWriteDiscard uint32 = 2
)

// GL device lists of GLGetDevices (cudaGLDeviceList*).
const (
	GLDeviceListAll          uint32 = 1
	GLDeviceListCurrentFrame uint32 = 2
	GLDeviceListNextFrame    uint32 = 3
)

// EGL stream consumer locations (cudaEglResourceLocation*): where a consumer wants frames.
const (
	EGLResourceSysmem uint32 = 0
	EGLResourceVidmem uint32 = 1
)

// EGL frame types (cudaEglFrameType*).
const (
	EGLFrameArray uint32 = 0 // planes are CUDA arrays
	EGLFramePitch uint32 = 1 // planes are pitched device memory
)

// EGLMaxPlanes is CUDA_EGL_MAX_PLANES: the planes one cudaEglFrame holds.
const EGLMaxPlanes = 3

// EGLPlane is a cudaEglPlaneDesc: the shape and format of one plane of an EGL frame.
type EGLPlane struct {
	Width, Height, Depth uint32
	Pitch                uint32 // bytes; pitched frames only
	Channels             uint32
	Format               ChannelFormat
}

// EGLPitched is one plane of a pitched EGL frame (a cudaPitchedPtr).
type EGLPitched struct {
	Ptr                 DevicePtr
	Pitch, XSize, YSize uint64
}

// EGLFrame is a cudaEglFrame: up to three planes, each a CUDA array (Type EGLFrameArray) or
// pitched device memory (Type EGLFramePitch), of one cudaEglColorFormat.
type EGLFrame struct {
	Arrays      [EGLMaxPlanes]Array      // Type EGLFrameArray
	Pitched     [EGLMaxPlanes]EGLPitched // Type EGLFramePitch
	Planes      [EGLMaxPlanes]EGLPlane
	PlaneCount  uint32
	Type        uint32
	ColorFormat uint32 // cudaEglColorFormat
}

// GraphicsDevice is graphics interoperability: OpenGL buffers and images and EGL images
// registered with CUDA, mapped for CUDA's use on a stream, and EGL streams and syncs. The GL
// calls need the GL context current on the calling thread (the device's thread). GL object
// names and EGL handles are objects of the calling process. The simulator has no OpenGL or
// EGL: its methods return an error wrapping cudaerr.NotSupported and leave the device usable.
type GraphicsDevice interface {
	// GLGetDevices is the CUDA devices of the current GL context (cudaGLGetDevices; list:
	// GLDeviceList*), at most max of them.
	GLGetDevices(list uint32, max int) ([]int, error)
	// GraphicsGLRegisterBuffer registers GL buffer object buffer (cudaGraphicsGLRegisterBuffer;
	// flags: GraphicsRegister*).
	GraphicsGLRegisterBuffer(buffer uint32, flags uint32) (GraphicsResource, error)
	// GraphicsGLRegisterImage registers GL texture or renderbuffer image of target (a GLenum:
	// GL_TEXTURE_2D, GL_RENDERBUFFER, ...) (cudaGraphicsGLRegisterImage).
	GraphicsGLRegisterImage(image uint32, target uint32, flags uint32) (GraphicsResource, error)
	// GraphicsEGLRegisterImage registers an EGLImageKHR (cudaGraphicsEGLRegisterImage).
	GraphicsEGLRegisterImage(image uintptr, flags uint32) (GraphicsResource, error)
	// GraphicsUnregisterResource unregisters r (cudaGraphicsUnregisterResource).
	GraphicsUnregisterResource(r GraphicsResource) error
	// GraphicsResourceSetMapFlags sets how r's next maps are used (GraphicsMap*)
	// (cudaGraphicsResourceSetMapFlags).
	GraphicsResourceSetMapFlags(r GraphicsResource, flags uint32) error
	// GraphicsMapResources maps rs for CUDA, ordered on s after the graphics API's work
	// (cudaGraphicsMapResources).
	GraphicsMapResources(rs []GraphicsResource, s Stream) error
	// GraphicsUnmapResources unmaps rs, ordered on s before the graphics API's later work
	// (cudaGraphicsUnmapResources).
	GraphicsUnmapResources(rs []GraphicsResource, s Stream) error
	// GraphicsResourceMappedPointer is the address and size of mapped buffer r
	// (cudaGraphicsResourceGetMappedPointer).
	GraphicsResourceMappedPointer(r GraphicsResource) (DevicePtr, uint64, error)
	// GraphicsSubResourceMappedArray is the array of layer or face index at mipLevel of mapped
	// image r (cudaGraphicsSubResourceGetMappedArray); it lives while r stays mapped.
	GraphicsSubResourceMappedArray(r GraphicsResource, index, mipLevel uint32) (Array, error)
	// GraphicsResourceMappedMipmappedArray is mapped image r as a mipmapped array
	// (cudaGraphicsResourceGetMappedMipmappedArray).
	GraphicsResourceMappedMipmappedArray(r GraphicsResource) (MipmappedArray, error)
	// GraphicsResourceMappedEGLFrame is mapped EGL resource r as a frame
	// (cudaGraphicsResourceGetMappedEglFrame).
	GraphicsResourceMappedEGLFrame(r GraphicsResource, index, mipLevel uint32) (EGLFrame, error)

	// EGLStreamConsumerConnect connects CUDA as the consumer of EGLStreamKHR stream
	// (cudaEGLStreamConsumerConnectWithFlags; flags: EGLResource*).
	EGLStreamConsumerConnect(stream uintptr, flags uint32) (EGLStreamConnection, error)
	// EGLStreamConsumerDisconnect disconnects a consumer (cudaEGLStreamConsumerDisconnect).
	EGLStreamConsumerDisconnect(c EGLStreamConnection) error
	// EGLStreamConsumerAcquireFrame acquires the stream's next frame as a resource, waiting at
	// most timeout microseconds (cudaEGLStreamConsumerAcquireFrame).
	EGLStreamConsumerAcquireFrame(c EGLStreamConnection, s Stream, timeout uint32) (GraphicsResource, error)
	// EGLStreamConsumerReleaseFrame gives an acquired frame back to the stream
	// (cudaEGLStreamConsumerReleaseFrame).
	EGLStreamConsumerReleaseFrame(c EGLStreamConnection, r GraphicsResource, s Stream) error
	// EGLStreamProducerConnect connects CUDA as the producer of stream, of frames width×height
	// (cudaEGLStreamProducerConnect).
	EGLStreamProducerConnect(stream uintptr, width, height int32) (EGLStreamConnection, error)
	// EGLStreamProducerDisconnect disconnects a producer (cudaEGLStreamProducerDisconnect).
	EGLStreamProducerDisconnect(c EGLStreamConnection) error
	// EGLStreamProducerPresentFrame presents f to the consumer (cudaEGLStreamProducerPresentFrame).
	EGLStreamProducerPresentFrame(c EGLStreamConnection, f EGLFrame, s Stream) error
	// EGLStreamProducerReturnFrame takes back a frame the consumer released
	// (cudaEGLStreamProducerReturnFrame).
	EGLStreamProducerReturnFrame(c EGLStreamConnection, s Stream) (EGLFrame, error)
	// EventCreateFromEGLSync makes an event of EGLSyncKHR sync (cudaEventCreateFromEGLSync;
	// flags: Event*); waiting for it waits for the sync. Destroy it with EventDestroy.
	EventCreateFromEGLSync(sync uintptr, flags uint32) (Event, error)
}
