package alloc

import (
	"fmt"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Location is where managed memory lives or should live: the host or one device.
type Location struct {
	host   bool
	device int
	valid  bool
}

// Host is the host's memory.
func Host() Location { return Location{host: true, valid: true} }

// OnDevice is d's memory.
func OnDevice(d *device.Device) Location {
	if d == nil {
		return Location{}
	}
	return Location{device: d.Ordinal(), valid: true}
}

// IsHost reports whether l is the host.
func (l Location) IsHost() bool { return l.valid && l.host }

// Device is the ordinal of the device l names, and whether it names one.
func (l Location) Device() (int, bool) { return l.device, l.valid && !l.host }

// IsSet reports whether l names a place at all (a range attribute may name none).
func (l Location) IsSet() bool { return l.valid }

// String is "host", "device N" or "none".
func (l Location) String() string {
	switch {
	case !l.valid:
		return "none"
	case l.host:
		return "host"
	}
	return fmt.Sprintf("device %d", l.device)
}

func (l Location) backend() (backend.Location, error) {
	switch {
	case !l.valid:
		return backend.Location{}, core.Invalid("no location given (use Host() or OnDevice(d))")
	case l.host:
		return backend.Location{Type: backend.LocationHost}, nil
	}
	return backend.Location{Type: backend.LocationDevice, ID: int32(l.device)}, nil
}

// locationOf reads the int form range attributes use: a device, cudaCpuDeviceId, or none.
func locationOf(v int32) Location {
	switch {
	case v == backend.CPUDevice:
		return Host()
	case v < 0:
		return Location{}
	}
	return Location{device: int(v), valid: true}
}
