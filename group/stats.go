package group

import (
	"time"

	"github.com/gpuactor/gpuactor/device"
)

// DeviceStats is a snapshot of one device of the group: its jobs, and the device's own Stats.
type DeviceStats struct {
	Healthy bool // in placement: the device has not failed
	// Restarts counts the devices that replaced a failed one in this place (WithRestart).
	Restarts uint64
	Queued   int64 // jobs placed on it, waiting for a stream
	Running  int64 // jobs running on it now
	// Done and Failed count the jobs that ended on it, each job once: an Idempotent job that
	// ran again after a device failed under it counts where its last run ended.
	Done   uint64
	Failed uint64
	// Retries counts the runs of Idempotent jobs that its device failing ended here, each
	// job then queued or run again on another device; they are neither Done nor Failed here.
	Retries uint64
	// MeanJob is the mean time of the runs that ended on it: jobs done or failed, and retries.
	MeanJob time.Duration
	// MemoryBytes is what jobs may declare (Bytes) on it at once; MemoryReserved what the
	// jobs placed on it declared.
	MemoryBytes, MemoryReserved int64
	Device                      device.Stats
}

// Stats is a snapshot of the group.
type Stats struct {
	// Waiting counts the jobs placed on no device yet: they wait in the shared queue for the
	// first free stream of any device (LeastOutstanding).
	Waiting int64
	// Devices are the group's devices, in the order of Group.Devices.
	Devices []DeviceStats
}

// Stats takes a snapshot of the group and every device of it, without waiting.
func (g *Group) Stats() Stats {
	out := make([]DeviceStats, len(g.members))
	for i, m := range g.members {
		gn := m.cur.Load()
		done, failed, retries := m.done.Load(), m.failedJobs.Load(), m.retried.Load()
		st := DeviceStats{
			Healthy: gn.healthy(), Restarts: m.restarts.Load(), Queued: max(0, m.queued.Load()),
			Running: m.running.Load(), Done: done, Failed: failed, Retries: retries,
			MemoryBytes: gn.memBytes, MemoryReserved: m.reserved.Load(), Device: gn.dev.Stats(),
		}
		if n := done + failed + retries; n > 0 {
			st.MeanJob = time.Duration(m.busy.Load() / int64(n))
		}
		out[i] = st
	}
	return Stats{Waiting: max(0, g.waiting.Load()), Devices: out}
}
