package device

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// UUID is a device's 16-byte universally unique identifier: stable across processes and
// reboots, unlike its ordinal, which CUDA_VISIBLE_DEVICES and enumeration order change.
type UUID [16]byte

// String is the form nvidia-smi and CUDA_VISIBLE_DEVICES use:
// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
func (u UUID) String() string {
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// LUID is a device's Windows locally unique identifier (zero elsewhere).
type LUID [8]byte

// UUID is the device's UUID (cudaDeviceProp.uuid); it returns once the actor has asked.
func (d *Device) UUID(ctx context.Context) (UUID, error) {
	u, err := d.identity(ctx)
	return UUID(u.UUID), err
}

// LUID is the device's LUID and node mask (cudaDeviceProp.luid and luidDeviceNodeMask), which
// the runtime fills on Windows with the WDDM driver only: elsewhere they are zero and carry no
// meaning. It returns once the actor has asked.
func (d *Device) LUID(ctx context.Context) (LUID, uint32, error) {
	u, err := d.identity(ctx)
	return LUID(u.LUID), u.LUIDNodeMask, err
}

func (d *Device) identity(ctx context.Context) (backend.DeviceUUID, error) {
	return core.Run(ctx, d.core(), func(rt backend.Device, _ *core.Tracker) (backend.DeviceUUID, error) {
		u, err := rt.UUID()
		if err != nil {
			return u, fmt.Errorf("gpuactor: device %d: reading its UUID: %w", d.Ordinal(), err)
		}
		return u, nil
	}).Await(ctx)
}
