// Package interop is gpuactor's bridge between devices, processes and other APIs: peer access
// between the GPUs of one process, sharing memory, events and pools with other processes
// (IPC), importing memory and semaphores that other APIs export (external resources), and the
// raw CUDA handles behind gpuactor's objects, for libraries that take them.
//
// Every call that touches a device runs on that device's actor, like the rest of gpuactor,
// and says when it returns; errors match the sentinels of package device and the cudaerr
// codes of the runtime with errors.Is.
//
// # Peer access
//
// CanAccessPeer and P2PAttribute ask whether, and how well, one device reaches another's
// memory. EnablePeerAccess(dev, peer) lets dev's kernels and copies use peer's memory
// directly; access is one way, so enable both directions for both. Enabling what is already
// enabled, and disabling what is not, are not errors. The same device twice, or a pair without
// a link, is an ErrNoPeerAccess error naming both devices. A kernel takes a peer's memory by
// address (device.Buffer.DevicePtr): a launch refuses another device's buffer object, whose lifetime
// it cannot hold, so keep that buffer open until the kernel has run.
//
// Copies between two devices' buffers need no peer access: streams.Stream.Copy takes buffers
// of the stream's device and one other device and issues a peer copy, direct over the link
// where there is one and staged by the runtime otherwise. A pool's memory is opened to other
// devices with alloc.Pool.SetAccess.
//
// # Interprocess sharing (IPC)
//
// ExportMemory, ExportEvent and ExportPool turn device memory, interprocess events and memory
// pools into handles another process on the same machine opens with OpenMemory, OpenEvent and
// ImportPool (pools travel as file descriptors: SendHandle and ReceiveHandle pass them over a
// Unix socket). The simulator runs in one process and shares nothing: its IPC calls fail with
// ErrIPCNotSupported.
//
// # External resources
//
// ImportMemory takes memory another API exported as a POSIX file descriptor (Vulkan's
// VK_KHR_external_memory_fd, the driver API's cuMemExportToShareableHandle); MapBuffer
// makes ordinary device buffers of ranges of it, and MapMipmappedArray an alloc.MipmappedArray
// of an image laid out in it (a Vulkan image), for array copies, textures and surfaces.
// ImportSemaphore takes a binary or timeline
// semaphore exported the same way; its Signal and Wait are stream operations whose futures
// complete when the GPU has done them; graphs.Graph.AddSemaphoreSignal and AddSemaphoreWait
// put them in graph nodes. The caller keeps its descriptor: the runtime is given a
// duplicate. The simulator imports nothing: these calls fail there with
// ErrExternalNotSupported.
//
// # Graphics (OpenGL and EGL)
//
// AttachGL hands a GL context (GLContext) to a device, which makes it current on its actor
// thread, where CUDA's GL calls must run; GL.Run runs the caller's GL code on that thread.
// RegisterGLBuffer, RegisterGLImage and RegisterEGLImage register GL buffers, textures and EGL
// images; MapResources maps them in stream order and Mapping.Unmap unmaps them as a stream
// operation. While mapped, a resource lends a device.Buffer (Buffer), alloc.Arrays (Array),
// an alloc.MipmappedArray or an EGL frame's planes, refused after the unmap. EGL streams
// (ConnectEGLStreamConsumer, ConnectEGLStreamProducer) pass frames between CUDA and other
// APIs; EventFromEGLSync makes an EGL fence an event streams wait for. The simulator and
// isolated devices refuse these calls with ErrGraphicsNotSupported. See
// docs/design/graphics-interop.md.
//
// # Raw handles
//
// streams.Stream.Handle and streams.Event.Handle give the cudaStream_t and cudaEvent_t
// behind gpuactor's objects, and device.Buffer.DevicePtr a buffer's address, for libraries that
// take them (cuBLAS's cublasSetStream, say). They stay owned by gpuactor and are valid until
// the object's Close; work another library queues on them is not tracked by gpuactor's
// futures. The other way round, WrapStream, WrapEvent and WrapPointer bring another
// library's stream, event and device memory in as ordinary gpuactor objects that gpuactor
// never destroys or frees. DriverEntryPoint gives the address of any CUDA driver API
// function, for calling what gpuactor does not wrap through a foreign-function library.
package interop
