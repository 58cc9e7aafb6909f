package backend

import "github.com/gpuactor/gpuactor/cudaerr"

// Limit is a cudaLimit value: a per-device resource size a program may set.
type Limit int32

// The cudaLimit values (identical in every runtime from 11.0 to 13.0).
const (
	LimitStackSize                    Limit = 0 // bytes of stack per GPU thread
	LimitPrintfFifoSize               Limit = 1 // bytes of the device-side printf FIFO
	LimitMallocHeapSize               Limit = 2 // bytes of the device-side malloc heap
	LimitDevRuntimeSyncDepth          Limit = 3 // nesting depth of device-runtime synchronization
	LimitDevRuntimePendingLaunchCount Limit = 4 // outstanding device-runtime launches
	LimitMaxL2FetchGranularity        Limit = 5 // bytes, 0 to 128: a hint
	LimitPersistingL2CacheSize        Limit = 6 // bytes of L2 set aside for persisting accesses
)

// Device flags (cudaDeviceSchedule*, cudaDeviceMapHost...), as cudaSetDeviceFlags takes them.
const (
	DeviceScheduleAuto         uint32 = 0x00
	DeviceScheduleSpin         uint32 = 0x01
	DeviceScheduleYield        uint32 = 0x02
	DeviceScheduleBlockingSync uint32 = 0x04
	DeviceScheduleMask         uint32 = 0x07
	DeviceMapHost              uint32 = 0x08
	DeviceLmemResizeToMax      uint32 = 0x10
	DeviceSyncMemops           uint32 = 0x80
	DeviceFlagsMask            uint32 = 0xff
)

// FlushScope is a cudaFlushGPUDirectRDMAWritesScope value.
type FlushScope int32

// The flush scopes.
const (
	FlushToOwner      FlushScope = 100 // visible to the context that owns the memory
	FlushToAllDevices FlushScope = 200 // visible to every device's context
)

// DeviceUUID is what identifies a device beyond its ordinal: its UUID, and on Windows its LUID
// and node mask (zero elsewhere, where the runtime leaves them undefined).
type DeviceUUID struct {
	UUID         UUIDBytes
	LUID         LUIDBytes
	LUIDNodeMask uint32
}

// UUIDBytes is a cudaUUID_t.
type UUIDBytes [16]byte

// LUIDBytes is a Windows locally unique identifier.
type LUIDBytes [8]byte

// DeviceManagement is the device-wide state a program may read and set: identity, limits,
// cache preferences, context flags, the runtime's per-thread error, GPUDirect RDMA flushes.
type DeviceManagement interface {
	// UUID is the device's UUID and LUID (cudaGetDeviceProperties' uuid and luid).
	UUID() (DeviceUUID, error)
	// Limit reads one cudaLimit of the device (cudaDeviceGetLimit).
	Limit(l Limit) (uint64, error)
	// SetLimit sets one cudaLimit of the device (cudaDeviceSetLimit); a value the device
	// refuses is cudaerr.InvalidValue, a limit it lacks cudaerr.UnsupportedLimit.
	SetLimit(l Limit, value uint64) error
	// CacheConfig is the device's preferred L1/shared-memory split, a cudaFuncCache value
	// (cudaDeviceGetCacheConfig).
	CacheConfig() (int32, error)
	// SetCacheConfig sets the preferred split for kernels that set none
	// (cudaDeviceSetCacheConfig).
	SetCacheConfig(c int32) error
	// SharedMemConfig is the shared-memory bank size, a cudaSharedMemConfig value
	// (cudaDeviceGetSharedMemConfig, deprecated since 12.x).
	SharedMemConfig() (int32, error)
	// SetSharedMemConfig sets the bank size where the device can change it
	// (cudaDeviceSetSharedMemConfig, deprecated since 12.x; no effect on current GPUs).
	SetSharedMemConfig(c int32) error
	// DeviceFlags are the flags of the device's primary context (cudaGetDeviceFlags).
	DeviceFlags() (uint32, error)
	// PeekLastError is the runtime's last error on the calling thread, left in place
	// (cudaPeekAtLastError).
	PeekLastError() error
	// FlushGPUDirectRDMAWrites makes GPUDirect RDMA writes to the device visible within scope
	// (cudaDeviceFlushGPUDirectRDMAWrites, target the current device).
	FlushGPUDirectRDMAWrites(scope FlushScope) error
}

// FlagOpener is a Backend that can open a device with context flags: the flags are the
// device's before its primary context exists. When the primary context is already active
// (another handle, or another library of the process, made it) with other scheduling flags,
// OpenWithFlags fails with cudaerr.SetOnActiveProcess rather than change them under it.
type FlagOpener interface {
	OpenWithFlags(ordinal int, flags uint32) (Device, error)
}

// PCIResolver is a Backend that finds a device by its PCI address without opening it
// (cudaDeviceGetByPCIBusId).
type PCIResolver interface {
	DeviceByPCIBusID(busID string) (int, error)
}

// ErrorDescriber is a Backend that names and describes the codes of its runtime
// (cudaGetErrorName, cudaGetErrorString).
type ErrorDescriber interface {
	ErrorName(code cudaerr.Code) string
	ErrorString(code cudaerr.Code) string
}
