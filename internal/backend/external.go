package backend

// ExternalMemory is an opaque cudaExternalMemory_t handle.
type ExternalMemory uintptr

// ExternalSemaphore is an opaque cudaExternalSemaphore_t handle.
type ExternalSemaphore uintptr

// ExternalSemaphoreKind is a cudaExternalSemaphoreHandleType value: the kinds of semaphore a
// POSIX file descriptor can carry.
type ExternalSemaphoreKind int32

// Semaphore kinds ImportExternalSemaphoreFD takes.
const (
	SemaphoreOpaqueFD   ExternalSemaphoreKind = 1 // cudaExternalSemaphoreHandleTypeOpaqueFd: a binary semaphore
	SemaphoreTimelineFD ExternalSemaphoreKind = 9 // cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd
)

// ExternalMemoryDedicated is cudaExternalMemoryDedicated: the memory is a dedicated
// allocation of the exporting API (Vulkan's VkMemoryDedicatedAllocateInfo).
const ExternalMemoryDedicated uint32 = 1

// ExternalDevice imports memory and semaphores other APIs (Vulkan, the driver API, another
// process) exported as POSIX file descriptors. The simulator has no such objects and
// implements none of it: its methods return an error wrapping cudaerr.NotSupported and leave
// the device usable.
type ExternalDevice interface {
	// ImportExternalMemoryFD imports size bytes of memory exported as an opaque file
	// descriptor (flags: ExternalMemoryDedicated). On success the runtime owns fd and closes
	// it; on failure it stays the caller's.
	ImportExternalMemoryFD(fd int, size uint64, flags uint32) (ExternalMemory, error)
	// ExternalMemoryMappedBuffer maps bytes [offset, offset+size) of m into the device's
	// address space; free the address with Free before destroying m.
	ExternalMemoryMappedBuffer(m ExternalMemory, offset, size uint64) (DevicePtr, error)
	// ExternalMemoryMappedMipmappedArray maps a mipmapped array of levels levels, level 0 of
	// format and extent (flags: the Array* flags, as MallocMipmappedArray takes them), whose
	// base level starts offset bytes into m; free it with FreeMipmappedArray before
	// destroying m.
	ExternalMemoryMappedMipmappedArray(m ExternalMemory, offset uint64, format ChannelFormat, extent Extent3D, levels, flags uint32) (MipmappedArray, error)
	// DestroyExternalMemory destroys m; its mapped buffers must be freed first.
	DestroyExternalMemory(m ExternalMemory) error
	// ImportExternalSemaphoreFD imports a semaphore exported as a file descriptor. On success
	// the runtime owns fd; on failure it stays the caller's.
	ImportExternalSemaphoreFD(fd int, kind ExternalSemaphoreKind) (ExternalSemaphore, error)
	// SignalExternalSemaphore queues a signal of sem on s: for a timeline semaphore, setting
	// it to value; for a binary one, value is ignored.
	SignalExternalSemaphore(sem ExternalSemaphore, value uint64, s Stream) error
	// WaitExternalSemaphore makes s wait until sem is signalled: for a timeline semaphore,
	// until it reaches value.
	WaitExternalSemaphore(sem ExternalSemaphore, value uint64, s Stream) error
	// DestroyExternalSemaphore destroys sem.
	DestroyExternalSemaphore(sem ExternalSemaphore) error
}
