package alloc

import (
	"context"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// MemoryType is what kind of memory a pointer points into.
type MemoryType int32

// Memory types.
const (
	Unregistered  = MemoryType(backend.MemoryUnregistered) // memory CUDA does not know
	HostMemory    = MemoryType(backend.MemoryHost)         // pinned or registered host memory
	DeviceMemory  = MemoryType(backend.MemoryDevice)       // device memory
	ManagedMemory = MemoryType(backend.MemoryManaged)      // managed memory
)

// String names the type.
func (t MemoryType) String() string {
	switch t {
	case Unregistered:
		return "unregistered"
	case HostMemory:
		return "host"
	case DeviceMemory:
		return "device"
	case ManagedMemory:
		return "managed"
	}
	return "unknown"
}

// PointerInfo is what unified addressing tells of a pointer.
type PointerInfo struct {
	Type MemoryType
	// Device is the device the memory belongs to (for host memory: the one it was allocated
	// or registered through); negative for unregistered memory.
	Device        int
	DevicePointer uintptr // the address kernels use; 0 when the device cannot address it
	HostPointer   uintptr // the address the host uses; 0 when the host cannot address it
}

// PointerAttributes describes any address — device, managed, pinned or plain host memory —
// asking through device d (cudaPointerGetAttributes).
func PointerAttributes(ctx context.Context, d *device.Device, p uintptr) (PointerInfo, error) {
	if d == nil {
		return PointerInfo{}, core.Invalid("PointerAttributes on a nil device")
	}
	return core.Run(ctx, coreDev(d), func(rt backend.Device, _ *core.Tracker) (PointerInfo, error) {
		a, err := rt.PointerAttributes(p)
		return PointerInfo{Type: MemoryType(a.Type), Device: a.Device, DevicePointer: a.DevicePointer, HostPointer: a.HostPointer}, err
	}).Await(ctx)
}
