package sim

import (
	"fmt"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

var _ backend.FlagOpener = (*Backend)(nil)

// activate makes the device's primary context with flags, or checks flags against the context
// that exists: scheduling and memop flags cannot change under it.
func (d *device) activate(flags uint32, explicit bool) error {
	m := &d.mgmt
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.active {
		m.active, m.flags = true, flags|backend.DeviceMapHost
		return nil
	}
	const sched = backend.DeviceScheduleMask | backend.DeviceSyncMemops
	if explicit && m.flags&sched != flags&sched {
		return newError("cudaSetDeviceFlags", cudaerr.SetOnActiveProcess, fmt.Sprintf(
			"device %d's primary context already exists with flags %#x; flags %#x can only be set before it is made", d.ordinal, m.flags, flags))
	}
	return nil
}

// OpenWithFlags opens device ordinal with context flags, as the runtime's cudaInitDevice with
// cudaInitDeviceFlagsAreValid does; once the device's context exists, other scheduling flags
// are refused with cudaerr.SetOnActiveProcess.
func (b *Backend) OpenWithFlags(ordinal int, flags uint32) (backend.Device, error) {
	if flags&^backend.DeviceFlagsMask != 0 {
		return nil, newError("cudaSetDeviceFlags", cudaerr.InvalidValue, fmt.Sprintf("device flags %#x have bits outside the mask %#x", flags, backend.DeviceFlagsMask))
	}
	if ordinal < 0 || ordinal >= len(b.devices) {
		return b.Open(ordinal)
	}
	if err := b.devices[ordinal].activate(flags, true); err != nil {
		return nil, err
	}
	return b.devices[ordinal], nil
}
