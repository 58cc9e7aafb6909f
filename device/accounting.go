package device

import "github.com/gpuactor/gpuactor/internal/core"

// MemKind is a kind of memory gpuactor allocates, as Stats.Memory counts it.
type MemKind int

// The kinds of memory counted per device.
const (
	KindDevice     = MemKind(core.KindDevice)     // cudaMalloc
	KindAsync      = MemKind(core.KindAsync)      // stream-ordered, from a memory pool
	KindPinned     = MemKind(core.KindPinned)     // page-locked host memory from cudaHostAlloc
	KindRegistered = MemKind(core.KindRegistered) // Go memory page-locked with cudaHostRegister
	KindManaged    = MemKind(core.KindManaged)    // cudaMallocManaged
	KindImported   = MemKind(core.KindImported)   // mapped from elsewhere (package interop): not limited
)

// String names the kind.
func (k MemKind) String() string { return core.MemKind(k).String() }

// KindUsage is what gpuactor holds of one kind: bytes and allocations.
type KindUsage struct {
	Bytes uint64
	Count uint64
}

// Usage is what gpuactor has allocated on a device and not yet freed, by kind. Stream-ordered
// allocations count from when they are queued until their free is queued. Pinned counts the
// staging pool's slots too (4 MiB each, pinned on the first copy of a Go slice that needs one,
// at most WithStagingLimit): they stay pinned, and counted, until the device is closed.
// Stats.Memory is one reading, taken at one instant: the limited kinds in it never add up past
// Limit, however many goroutines allocate meanwhile.
type Usage struct {
	Device, Async, Pinned, Registered, Managed KindUsage
	// Imported is memory gpuactor maps but did not allocate: another process's (IPC), another
	// API's (external memory) or another library's (interop.WrapPointer). It does not count
	// against the limit.
	Imported KindUsage
	// Limit is the WithMemoryLimit cap on Device+Async+Managed bytes; 0 means none.
	Limit uint64
}

// DeviceBytes is the device memory counted against the limit: Device+Async+Managed.
func (u Usage) DeviceBytes() uint64 { return u.Device.Bytes + u.Async.Bytes + u.Managed.Bytes }

// WithMemoryLimit caps the device memory (device, stream-ordered and managed allocations)
// gpuactor allocates on each device opened with it, in bytes. A request that would pass it
// fails with ErrMemoryLimit before reaching the runtime. 0 means no limit.
func WithMemoryLimit(bytes uint64) Option { return func(c *config) { c.memLimit = bytes } }

// usage is what gpuactor has allocated on the device, now (Stats.Memory).
func (d *Device) usage() Usage {
	by, limit := d.core().Usage()
	k := func(kind core.MemKind) KindUsage { return KindUsage(by[kind]) }
	return Usage{Device: k(core.KindDevice), Async: k(core.KindAsync), Pinned: k(core.KindPinned),
		Registered: k(core.KindRegistered), Managed: k(core.KindManaged), Imported: k(core.KindImported), Limit: limit}
}
