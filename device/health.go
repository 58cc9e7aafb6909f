package device

import (
	"context"
	"time"
)

// WithWatchdog fails the device as stuck once the GPU has passed none of its operations in
// flight for longer than d (0, the default: never). A kernel that never ends reports no error
// and blocks its stream, every synchronization and the device's release for good; with a
// watchdog, the futures still waiting fail with an error wrapping ErrStuck and
// ErrDeviceFailed, later calls are refused, Stats.Failure says so, and Close returns without
// waiting, leaving the device's memory to the process's exit, the only thing that frees a GPU
// running such a kernel (docs/faults.md). Every call already waiting for the GPU returns
// then with that error too: Synchronize, an event's Synchronize, the Close of a buffer,
// stream or module. On an isolated device the watchdog also bounds a call that waits on a
// frozen worker (heartbeat or none): once the worker has said nothing for d (at least a
// second) while the device waits for it, it is pinged, and killed as hung unless it answers
// within as long again, failing the device with isolate.ErrWorkerDied. Choose d longer than the longest kernel.
func WithWatchdog(d time.Duration) Option { return func(c *config) { c.watchdog = max(d, 0) } }

// Health checks the device end to end: it returns the device's failure when it has one, else
// has the device's actor make the GPU pass a point on a stream of its own and waits for it,
// and returns nil once it has. An error wrapping ctx's error means no answer before ctx
// ended: the device is overloaded, or stuck (see WithWatchdog). A kernel that never ends on
// one stream does not fail Health: the GPU still runs other streams' work.
func (d *Device) Health(ctx context.Context) error { return d.core().Health(ctx) }
