package graphs

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// MemoryUsage is the device memory a device keeps for the allocation nodes (AddAlloc) of its
// graphs, in bytes.
type MemoryUsage struct {
	Used         uint64 // allocated by graph launches and not yet freed
	UsedHigh     uint64 // the most Used has been since the last ResetMemoryHighWatermarks
	Reserved     uint64 // reserved for graph allocations, used or not
	ReservedHigh uint64 // the most Reserved has been since the last ResetMemoryHighWatermarks
}

// onDevice runs op on dev's actor thread.
func onDevice[T any](ctx context.Context, dev *device.Device, op func(rt backend.Device) (T, error)) (T, error) {
	if dev == nil {
		var zero T
		return zero, invalid("nil device")
	}
	return core.Run(ctx, coreDev(dev), func(rt backend.Device, _ *core.Tracker) (T, error) { return op(rt) }).Await(ctx)
}

// ReadMemoryUsage reports dev's graph memory (cudaDeviceGetGraphMemAttribute).
func ReadMemoryUsage(ctx context.Context, dev *device.Device) (MemoryUsage, error) {
	return onDevice(ctx, dev, func(rt backend.Device) (MemoryUsage, error) {
		var u MemoryUsage
		for _, f := range []struct {
			attr backend.GraphMemAttr
			to   *uint64
		}{
			{backend.GraphMemUsedCurrent, &u.Used}, {backend.GraphMemUsedHigh, &u.UsedHigh},
			{backend.GraphMemReservedCurrent, &u.Reserved}, {backend.GraphMemReservedHigh, &u.ReservedHigh},
		} {
			v, err := rt.GraphMemAttribute(f.attr)
			if err != nil {
				return MemoryUsage{}, fmt.Errorf("gpuactor/graphs: reading the graph %s: %w", f.attr, err)
			}
			*f.to = v
		}
		return u, nil
	})
}

// ResetMemoryHighWatermarks sets UsedHigh and ReservedHigh back to the current figures
// (cudaDeviceSetGraphMemAttribute); it returns once they are reset.
func ResetMemoryHighWatermarks(ctx context.Context, dev *device.Device) error {
	_, err := onDevice(ctx, dev, func(rt backend.Device) (struct{}, error) {
		for _, a := range []backend.GraphMemAttr{backend.GraphMemUsedHigh, backend.GraphMemReservedHigh} {
			if err := rt.SetGraphMemAttribute(a, 0); err != nil {
				return struct{}{}, fmt.Errorf("gpuactor/graphs: resetting the graph %s: %w", a, err)
			}
		}
		return struct{}{}, nil
	})
	return err
}

// TrimMemory gives the memory dev reserves for graph allocations and does not use back to
// the system (cudaDeviceGraphMemTrim), once the work queued before it that frees graph
// memory is done: call it after synchronizing.
func TrimMemory(ctx context.Context, dev *device.Device) error {
	_, err := onDevice(ctx, dev, func(rt backend.Device) (struct{}, error) {
		if err := rt.GraphMemTrim(); err != nil {
			return struct{}{}, fmt.Errorf("gpuactor/graphs: trimming graph memory: %w", err)
		}
		return struct{}{}, nil
	})
	return err
}
