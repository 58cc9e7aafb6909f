package alloc

import (
	"fmt"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Location is where managed memory lives or should live: the host, one of its NUMA nodes, or
// one device. The zero Location names none.
type Location struct {
	kind backend.LocationType
	id   int
}

// Host is the host's memory.
func Host() Location { return Location{kind: backend.LocationHost} }

// HostNUMA is host NUMA node node's memory (CUDA 13.0 runtimes: older ones refuse it with
// cudaerr.NotSupported). Advice and prefetches take it; SetAccessedBy does not.
func HostNUMA(node int) Location { return Location{kind: backend.LocationHostNUMA, id: node} }

// HostNUMACurrent is the memory of the host NUMA node nearest the CPU of the device's actor
// thread, which makes the call (CUDA 13.0 runtimes). Range attributes report it as the node
// the runtime chose (the simulator's is node 0), or as HostNUMACurrent itself.
func HostNUMACurrent() Location { return Location{kind: backend.LocationHostNUMACurrent} }

// OnDevice is d's memory.
func OnDevice(d *device.Device) Location {
	if d == nil {
		return Location{}
	}
	return Location{kind: backend.LocationDevice, id: d.Ordinal()}
}

// IsHost reports whether l is the host as a whole (not one of its NUMA nodes).
func (l Location) IsHost() bool { return l.kind == backend.LocationHost }

// Device is the ordinal of the device l names, and whether it names one.
func (l Location) Device() (int, bool) { return l.id, l.kind == backend.LocationDevice }

// NUMANode is the host NUMA node l names, and whether it names one (HostNUMACurrent names
// none until the runtime resolves it).
func (l Location) NUMANode() (int, bool) { return l.id, l.kind == backend.LocationHostNUMA }

// IsSet reports whether l names a place at all (a range attribute may name none).
func (l Location) IsSet() bool { return l.kind != backend.LocationInvalid }

// String is "host", "host NUMA node N", "host NUMA node of the calling thread", "device N" or
// "none".
func (l Location) String() string {
	switch l.kind {
	case backend.LocationHost:
		return "host"
	case backend.LocationHostNUMA:
		return fmt.Sprintf("host NUMA node %d", l.id)
	case backend.LocationHostNUMACurrent:
		return "host NUMA node of the calling thread"
	case backend.LocationDevice:
		return fmt.Sprintf("device %d", l.id)
	}
	return "none"
}

func (l Location) backend() (backend.Location, error) {
	switch l.kind {
	case backend.LocationInvalid:
		return backend.Location{}, core.Invalid("no location given (use Host(), HostNUMA(n), HostNUMACurrent() or OnDevice(d))")
	case backend.LocationHost, backend.LocationHostNUMACurrent:
		return backend.Location{Type: l.kind}, nil
	case backend.LocationDevice, backend.LocationHostNUMA:
		if l.id < 0 {
			return backend.Location{}, core.Invalid("negative id %d in location %v", l.id, l)
		}
		return backend.Location{Type: l.kind, ID: int32(l.id)}, nil
	}
	return backend.Location{}, core.Invalid("unknown location kind %d", int32(l.kind))
}

// locationFrom is a location as the runtime reported it.
func locationFrom(l backend.Location) Location {
	switch l.Type {
	case backend.LocationHost, backend.LocationHostNUMACurrent:
		return Location{kind: l.Type}
	case backend.LocationDevice, backend.LocationHostNUMA:
		return Location{kind: l.Type, id: int(l.ID)}
	}
	return Location{}
}

// locationOf reads the int form of the accessed-by list: a device or cudaCpuDeviceId.
func locationOf(v int32) Location {
	switch {
	case v == backend.CPUDevice:
		return Host()
	case v < 0:
		return Location{}
	}
	return Location{kind: backend.LocationDevice, id: int(v)}
}
