package device

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Limit is a cudaLimit: a device-wide resource size that kernels run within, read with
// Device.Limit and set with Device.SetLimit.
type Limit int32

// The limits. The two L2 limits are hints the device may clamp: read the limit back to know
// what it kept.
const (
	LimitStackSize                    Limit = Limit(backend.LimitStackSize)                    // bytes of stack per GPU thread
	LimitPrintfFifoSize               Limit = Limit(backend.LimitPrintfFifoSize)               // bytes of the FIFO device-side printf writes to
	LimitMallocHeapSize               Limit = Limit(backend.LimitMallocHeapSize)               // bytes of the heap device-side malloc allocates from
	LimitDevRuntimeSyncDepth          Limit = Limit(backend.LimitDevRuntimeSyncDepth)          // grid depth at which device code may synchronize (compute capability below 9.0)
	LimitDevRuntimePendingLaunchCount Limit = Limit(backend.LimitDevRuntimePendingLaunchCount) // launches from device code that may be outstanding
	LimitMaxL2FetchGranularity        Limit = Limit(backend.LimitMaxL2FetchGranularity)        // bytes, 0 to 128, of one L2 fetch
	LimitPersistingL2CacheSize        Limit = Limit(backend.LimitPersistingL2CacheSize)        // bytes of L2 set aside for persisting accesses, up to AttrMaxPersistingL2CacheSize
)

var limitNames = map[Limit]string{
	LimitStackSize:                    "cudaLimitStackSize",
	LimitPrintfFifoSize:               "cudaLimitPrintfFifoSize",
	LimitMallocHeapSize:               "cudaLimitMallocHeapSize",
	LimitDevRuntimeSyncDepth:          "cudaLimitDevRuntimeSyncDepth",
	LimitDevRuntimePendingLaunchCount: "cudaLimitDevRuntimePendingLaunchCount",
	LimitMaxL2FetchGranularity:        "cudaLimitMaxL2FetchGranularity",
	LimitPersistingL2CacheSize:        "cudaLimitPersistingL2CacheSize",
}

// String is the limit's runtime name, e.g. "cudaLimitStackSize".
func (l Limit) String() string {
	if n, ok := limitNames[l]; ok {
		return n
	}
	return fmt.Sprintf("cudaLimit(%d)", int32(l))
}

// Limit reads limit l of the device (cudaDeviceGetLimit); it returns once the device's actor
// has asked. A value that is not a cudaLimit is an error wrapping cudaerr.UnsupportedLimit.
func (d *Device) Limit(ctx context.Context, l Limit) (uint64, error) {
	if _, ok := limitNames[l]; !ok {
		// Checked here, not left to the runtime, which answers cudaErrorInvalidValue for a
		// number it does not know.
		return 0, fmt.Errorf("gpuactor: device %d: reading limit %v: not a cudaLimit: %w", d.Ordinal(), l, cudaerr.UnsupportedLimit)
	}
	return core.Run(ctx, d.core(), func(rt backend.Device, _ *core.Tracker) (uint64, error) {
		v, err := rt.Limit(backend.Limit(l))
		if err != nil {
			return 0, fmt.Errorf("gpuactor: device %d: reading limit %v: %w", d.Ordinal(), l, err)
		}
		return v, nil
	}).Await(ctx)
}

// SetLimit sets limit l of the device to value for every kernel launched after it
// (cudaDeviceSetLimit); it returns once the device has taken it. A value the device refuses is
// an error naming the limit and the value, wrapping the runtime's code (cudaerr.InvalidValue,
// cudaerr.MemoryAllocation when the device cannot reserve the memory, cudaerr.UnsupportedLimit
// for a limit the device lacks), and the limit keeps its previous value.
func (d *Device) SetLimit(ctx context.Context, l Limit, value uint64) error {
	if _, ok := limitNames[l]; !ok {
		return fmt.Errorf("gpuactor: device %d: setting limit %v to %d: not a cudaLimit: %w", d.Ordinal(), l, value, cudaerr.UnsupportedLimit)
	}
	return core.Do(ctx, d.core(), func(rt backend.Device, _ *core.Tracker) error {
		if err := rt.SetLimit(backend.Limit(l), value); err != nil {
			return fmt.Errorf("gpuactor: device %d: setting limit %v to %d: %w", d.Ordinal(), l, value, err)
		}
		return nil
	})
}
