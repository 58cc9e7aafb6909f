package sim

import (
	"crypto/sha256"
	"fmt"
	"sync"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// mgmtState is what a simulated device's context holds besides memory and streams: its limits,
// its cache preferences, and its flags once the primary context exists.
type mgmtState struct {
	mu       sync.Mutex
	limits   map[backend.Limit]uint64
	cache    int32
	bankSize int32
	active   bool // the primary context exists: flags are fixed
	flags    uint32
}

// Limit defaults, as the runtime reports them on an H100.
const (
	defaultStackSize  = 1 << 10
	defaultPrintfFifo = 1 << 20
	defaultMallocHeap = 8 << 20
	maxStackSize      = 512 << 10 // the most local memory one thread may have
	maxL2Fetch        = 128
)

func (m *mgmtState) init() {
	m.limits = map[backend.Limit]uint64{
		backend.LimitStackSize:                    defaultStackSize,
		backend.LimitPrintfFifoSize:               defaultPrintfFifo,
		backend.LimitMallocHeapSize:               defaultMallocHeap,
		backend.LimitDevRuntimeSyncDepth:          2,
		backend.LimitDevRuntimePendingLaunchCount: 2048,
		backend.LimitMaxL2FetchGranularity:        64,
		backend.LimitPersistingL2CacheSize:        0,
	}
	m.bankSize = 1 // cudaSharedMemBankSizeFourByte: the only width since Maxwell
}

// UUID is derived from the machine's name and the ordinal, so it is stable for one
// configuration and differs between devices; it is shaped as a version-4 UUID. The LUID is
// zero, as off Windows.
func (d *device) UUID() (backend.DeviceUUID, error) {
	var u backend.DeviceUUID
	if err := d.alive("cudaGetDeviceProperties"); err != nil {
		return u, err
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("gpuactor sim %s %d", d.b.name, d.ordinal)))
	copy(u.UUID[:], sum[:])
	u.UUID[6] = u.UUID[6]&0x0f | 0x40
	u.UUID[8] = u.UUID[8]&0x3f | 0x80
	return u, nil
}

// Limit reads one limit; an unknown one is cudaerr.UnsupportedLimit.
func (d *device) Limit(l backend.Limit) (uint64, error) {
	const op = "cudaDeviceGetLimit"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	d.mgmt.mu.Lock()
	v, ok := d.mgmt.limits[l]
	d.mgmt.mu.Unlock()
	if !ok {
		return 0, d.fail(op, cudaerr.UnsupportedLimit, "limit %d is not a cudaLimit", int32(l))
	}
	return v, nil
}

// SetLimit sets one limit as the runtime does on an H100: the stack is at most what one thread
// may have of local memory, the malloc heap at most the device's free memory, the two hints (L2
// fetch granularity, persisting L2 size) are clamped to their ranges, and the sync depth of the
// device runtime is not a limit of compute capability 9.0.
func (d *device) SetLimit(l backend.Limit, v uint64) error {
	const op = "cudaDeviceSetLimit"
	if err := d.alive(op); err != nil {
		return err
	}
	switch l {
	case backend.LimitStackSize:
		if v > maxStackSize {
			return d.fail(op, cudaerr.InvalidValue, "stack size %d is above the %d bytes of local memory a thread may have", v, maxStackSize)
		}
	case backend.LimitMallocHeapSize:
		if free := d.mem.capacity - d.mem.inUse(); v > free {
			return d.fail(op, cudaerr.MemoryAllocation, "a malloc heap of %d bytes does not fit the %d bytes free", v, free)
		}
	case backend.LimitDevRuntimeSyncDepth:
		return d.fail(op, cudaerr.UnsupportedLimit, "cudaLimitDevRuntimeSyncDepth applies to compute capability below 9.0 only")
	case backend.LimitMaxL2FetchGranularity:
		v = min(v, maxL2Fetch)
	case backend.LimitPersistingL2CacheSize:
		v = min(v, uint64(d.attrs[backend.Attr(108)]))
	case backend.LimitPrintfFifoSize, backend.LimitDevRuntimePendingLaunchCount:
	default:
		return d.fail(op, cudaerr.UnsupportedLimit, "limit %d is not a cudaLimit", int32(l))
	}
	d.mgmt.mu.Lock()
	d.mgmt.limits[l] = v
	d.mgmt.mu.Unlock()
	return nil
}

// CacheConfig is the preference last set (cudaFuncCachePreferNone at first).
func (d *device) CacheConfig() (int32, error) {
	if err := d.alive("cudaDeviceGetCacheConfig"); err != nil {
		return 0, err
	}
	d.mgmt.mu.Lock()
	defer d.mgmt.mu.Unlock()
	return d.mgmt.cache, nil
}

// SetCacheConfig records a cudaFuncCache preference (0 to 3).
func (d *device) SetCacheConfig(c int32) error {
	const op = "cudaDeviceSetCacheConfig"
	if err := d.alive(op); err != nil {
		return err
	}
	if c < 0 || c > 3 {
		return d.fail(op, cudaerr.InvalidValue, "cache configuration %d is not a cudaFuncCache value (0 to 3)", c)
	}
	d.mgmt.mu.Lock()
	d.mgmt.cache = c
	d.mgmt.mu.Unlock()
	return nil
}

// SharedMemConfig is cudaSharedMemBankSizeFourByte: the bank width is fixed.
func (d *device) SharedMemConfig() (int32, error) {
	if err := d.alive("cudaDeviceGetSharedMemConfig"); err != nil {
		return 0, err
	}
	d.mgmt.mu.Lock()
	defer d.mgmt.mu.Unlock()
	return d.mgmt.bankSize, nil
}

// SetSharedMemConfig accepts any cudaSharedMemConfig value and changes nothing, as on every
// GPU since Maxwell, whose bank width is fixed.
func (d *device) SetSharedMemConfig(c int32) error {
	const op = "cudaDeviceSetSharedMemConfig"
	if err := d.alive(op); err != nil {
		return err
	}
	if c < 0 || c > 2 {
		return d.fail(op, cudaerr.InvalidValue, "shared memory configuration %d is not a cudaSharedMemConfig value (0 to 2)", c)
	}
	return nil
}

// DeviceFlags are the flags the primary context was made with, cudaDeviceMapHost included as
// the runtime always adds it.
func (d *device) DeviceFlags() (uint32, error) {
	if err := d.alive("cudaGetDeviceFlags"); err != nil {
		return 0, err
	}
	d.mgmt.mu.Lock()
	defer d.mgmt.mu.Unlock()
	return d.mgmt.flags, nil
}

// PeekLastError is the last error a call on this device returned, left in place; on a faulted
// device, the sticky error.
func (d *device) PeekLastError() error {
	if err := d.alive("cudaPeekAtLastError"); err != nil {
		return err
	}
	d.errMu.Lock()
	defer d.errMu.Unlock()
	return d.lastErr
}

// FlushGPUDirectRDMAWrites has nothing to flush: no third-party device writes simulated memory.
func (d *device) FlushGPUDirectRDMAWrites(scope backend.FlushScope) error {
	const op = "cudaDeviceFlushGPUDirectRDMAWrites"
	if err := d.alive(op); err != nil {
		return err
	}
	if scope != backend.FlushToOwner && scope != backend.FlushToAllDevices {
		return d.fail(op, cudaerr.InvalidValue, "flush scope %d is neither cudaFlushGPUDirectRDMAWritesToOwner (100) nor ToAllDevices (200)", int32(scope))
	}
	return nil
}
