package device

import (
	"context"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// ProfilerStart enables profile collection by a profiler attached to the process, such as
// Nsight Systems run with --capture-range=cudaProfilerApi (cudaProfilerStart); it returns once
// the runtime has done so. Without a profiler it does nothing.
func (d *Device) ProfilerStart(ctx context.Context) error {
	return core.Do(ctx, d.core(), func(rt backend.Device, _ *core.Tracker) error { return rt.ProfilerStart() })
}

// ProfilerStop disables profile collection and flushes what was collected (cudaProfilerStop);
// it returns once the runtime has done so.
func (d *Device) ProfilerStop(ctx context.Context) error {
	return core.Do(ctx, d.core(), func(rt backend.Device, _ *core.Tracker) error { return rt.ProfilerStop() })
}

// ResetPersistingL2Cache turns every persisting line of the device's L2 cache back into a
// normal one (cudaCtxResetPersistingL2Cache), so that the set-aside part is free for the next
// streams.AccessPolicy; it returns once the runtime has done so.
func (d *Device) ResetPersistingL2Cache(ctx context.Context) error {
	return core.Do(ctx, d.core(), func(rt backend.Device, _ *core.Tracker) error { return rt.ResetPersistingL2Cache() })
}
