package backend

import "unsafe"

// MemPool is an opaque cudaMemPool_t handle.
type MemPool uintptr

// LocationType is a cudaMemLocationType value.
type LocationType int32

// Memory location types.
const (
	LocationInvalid LocationType = 0
	LocationDevice  LocationType = 1 // ID is a device ordinal
	LocationHost    LocationType = 2 // ID is ignored
)

// Location is a cudaMemLocation: where memory lives or should live.
type Location struct {
	Type LocationType
	ID   int32
}

// CPUDevice is cudaCpuDeviceId, the "device" the older managed-memory calls use for the host.
const CPUDevice = -1

// PoolAttr is a cudaMemPoolAttr value. Attributes 1–3 are C ints (booleans), 4–8 64-bit.
type PoolAttr int32

// Memory pool attributes.
const (
	PoolReuseFollowEventDependencies   PoolAttr = 1
	PoolReuseAllowOpportunistic        PoolAttr = 2
	PoolReuseAllowInternalDependencies PoolAttr = 3
	PoolReleaseThreshold               PoolAttr = 4
	PoolReservedMemCurrent             PoolAttr = 5
	PoolReservedMemHigh                PoolAttr = 6
	PoolUsedMemCurrent                 PoolAttr = 7
	PoolUsedMemHigh                    PoolAttr = 8
)

// Is64 reports whether the attribute's value is a 64-bit integer (else a C int).
func (a PoolAttr) Is64() bool { return a >= PoolReleaseThreshold }

// AccessFlags is a cudaMemAccessFlags value.
type AccessFlags int32

// Pool access flags.
const (
	AccessNone      AccessFlags = 0
	AccessRead      AccessFlags = 1
	AccessReadWrite AccessFlags = 3
)

// Handle types a pool's memory may be exported as (cudaMemAllocationHandleType).
const (
	HandleNone                uint32 = 0
	HandlePosixFileDescriptor uint32 = 1
	HandleFabric              uint32 = 8
)

// PoolProps is what MemPoolCreate needs; the pool's memory is pinned device memory.
type PoolProps struct {
	Location    Location // a device
	HandleTypes uint32   // Handle* flags
	MaxSize     uint64   // 0: no limit beyond the device's memory (honoured from CUDA 12.2)
}

// cudaMallocManaged flags (cudaMemAttach*), also used by StreamAttachMem.
const (
	AttachGlobal uint32 = 1
	AttachHost   uint32 = 2
	AttachSingle uint32 = 4
)

// Advice is a cudaMemoryAdvise value.
type Advice int32

// Managed-memory advice.
const (
	AdviseSetReadMostly          Advice = 1
	AdviseUnsetReadMostly        Advice = 2
	AdviseSetPreferredLocation   Advice = 3
	AdviseUnsetPreferredLocation Advice = 4
	AdviseSetAccessedBy          Advice = 5
	AdviseUnsetAccessedBy        Advice = 6
)

// RangeAttr is a cudaMemRangeAttribute value; only those every runtime from 11.4 knows.
type RangeAttr int32

// Managed-memory range attributes. ReadMostly, PreferredLocation and LastPrefetchLocation
// are one C int (a device ordinal, CPUDevice, or -2 for none); AccessedBy is a list of them.
const (
	RangeReadMostly           RangeAttr = 1
	RangePreferredLocation    RangeAttr = 2
	RangeAccessedBy           RangeAttr = 3
	RangeLastPrefetchLocation RangeAttr = 4
)

// MemoryType is a cudaMemoryType value.
type MemoryType int32

// Memory types PointerAttributes reports.
const (
	MemoryUnregistered MemoryType = 0
	MemoryHost         MemoryType = 1
	MemoryDevice       MemoryType = 2
	MemoryManaged      MemoryType = 3
)

// PointerAttrs is what cudaPointerGetAttributes says of a pointer.
type PointerAttrs struct {
	Type          MemoryType
	Device        int
	DevicePointer uintptr // 0 when the device cannot address it
	HostPointer   uintptr // 0 when the host cannot address it
}

// AllocStarter is a Device whose stream-ordered allocations can be started and their
// addresses collected later, several in flight at once: one whose every call is a round trip
// (an isolated device's worker), where each allocation awaited alone costs the caller a round
// trip. The device runs a started allocation in order with the calls made before and after
// it, as MallocAsync at that point would.
type AllocStarter interface {
	// StartMallocAsync starts MallocFromPoolAsync from pool when fromPool, else MallocAsync.
	StartMallocAsync(size uint64, pool MemPool, fromPool bool, s Stream) (PendingAlloc, error)
}

// PendingAlloc is a started allocation.
type PendingAlloc interface {
	// Wait returns the allocation's address, or why it failed. Call it once.
	Wait() (DevicePtr, error)
}

// AllocDevice is the stream-ordered allocator, memory pools, managed memory and unified
// addressing. Pool handles belong to the Backend, like stream handles.
type AllocDevice interface {
	// MallocAsync allocates size bytes from the device's current pool, ordered on s.
	//remote:startable
	MallocAsync(size uint64, s Stream) (DevicePtr, error)
	// MallocFromPoolAsync allocates size bytes from pool, ordered on s.
	//remote:startable
	MallocFromPoolAsync(size uint64, pool MemPool, s Stream) (DevicePtr, error)
	// FreeAsync returns p (from MallocAsync or MallocFromPoolAsync) to its pool, ordered on s.
	//remote:posted
	FreeAsync(p DevicePtr, s Stream) error

	// MemPoolCreate creates a pool.
	MemPoolCreate(props PoolProps) (MemPool, error)
	// MemPoolDestroy destroys a pool; memory still allocated from it is released once freed.
	MemPoolDestroy(pool MemPool) error
	// DefaultMemPool is the device's default pool.
	DefaultMemPool() (MemPool, error)
	// CurrentMemPool is the pool MallocAsync uses on the device.
	CurrentMemPool() (MemPool, error)
	// SetCurrentMemPool makes pool (of this device) the one MallocAsync uses.
	SetCurrentMemPool(pool MemPool) error
	// MemPoolSetAttribute sets an attribute (booleans as 0/1).
	MemPoolSetAttribute(pool MemPool, attr PoolAttr, value uint64) error
	// MemPoolGetAttribute reads an attribute (booleans as 0/1).
	MemPoolGetAttribute(pool MemPool, attr PoolAttr) (uint64, error)
	// MemPoolTrimTo releases memory the pool holds unused until it holds at most keep bytes.
	MemPoolTrimTo(pool MemPool, keep uint64) error
	// MemPoolSetAccess sets how device ordinal may access the pool's memory.
	MemPoolSetAccess(pool MemPool, ordinal int, flags AccessFlags) error
	// MemPoolGetAccess is how device ordinal may access the pool's memory.
	MemPoolGetAccess(pool MemPool, ordinal int) (AccessFlags, error)

	// MallocManaged allocates managed memory (flags: AttachGlobal or AttachHost).
	MallocManaged(size uint64, flags uint32) (DevicePtr, error)
	// ManagedHost is the host address of managed memory at p (p itself on a real GPU).
	ManagedHost(p DevicePtr, n uint64) (unsafe.Pointer, error)
	// MemPrefetch migrates n bytes of managed memory at p to loc, ordered on s.
	MemPrefetch(p DevicePtr, n uint64, loc Location, s Stream) error
	// MemAdvise gives advice about n bytes of managed memory at p.
	MemAdvise(p DevicePtr, n uint64, advice Advice, loc Location) error
	// MemRangeAttribute reads attr of n bytes of managed memory at p into out (one int32, or
	// one a device for RangeAccessedBy).
	MemRangeAttribute(p DevicePtr, n uint64, attr RangeAttr, out []int32) error
	// StreamAttachMem attaches managed memory at p to s (flags: Attach*), ordered on s.
	StreamAttachMem(s Stream, p DevicePtr, n uint64, flags uint32) error

	// PointerAttributes describes any pointer: device, host, managed or unknown memory.
	PointerAttributes(p uintptr) (PointerAttrs, error)
	// HostDevicePointer is the device address of mapped pinned host memory.
	HostDevicePointer(p unsafe.Pointer) (DevicePtr, error)
}
