package device

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// FlushScope says to whom FlushGPUDirectRDMAWrites makes writes visible.
type FlushScope int32

// The flush scopes.
const (
	// FlushToOwner makes the writes visible to the device's own context.
	FlushToOwner FlushScope = FlushScope(backend.FlushToOwner)
	// FlushToAllDevices makes them visible to every device's context.
	FlushToAllDevices FlushScope = FlushScope(backend.FlushToAllDevices)
)

// FlushGPUDirectRDMAWrites blocks until GPUDirect RDMA writes a third-party device (a NIC, say)
// made to this device's memory are visible within scope (cudaDeviceFlushGPUDirectRDMAWrites);
// it returns once the runtime has flushed. Devices whose
// AttrGPUDirectRDMAFlushWritesOptions has no bit set cannot flush: that is an error wrapping
// cudaerr.NotSupported. A scope other than the two is ErrInvalidArgument.
func (d *Device) FlushGPUDirectRDMAWrites(ctx context.Context, scope FlushScope) error {
	if d == nil {
		return core.Invalid("FlushGPUDirectRDMAWrites on a nil device")
	}
	if scope != FlushToOwner && scope != FlushToAllDevices {
		return core.Invalid("FlushGPUDirectRDMAWrites: scope %d is neither FlushToOwner nor FlushToAllDevices", int32(scope))
	}
	return core.Do(ctx, d.core(), func(rt backend.Device, _ *core.Tracker) error {
		if err := rt.FlushGPUDirectRDMAWrites(backend.FlushScope(scope)); err != nil {
			return fmt.Errorf("gpuactor: device %d: flushing GPUDirect RDMA writes: %w", d.Ordinal(), err)
		}
		return nil
	})
}
