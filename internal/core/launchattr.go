package core

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Cluster size limits: a cluster may hold portableClusterSize blocks on every device that has
// clusters, nonPortableClusterSize on some once the kernel allows it.
const (
	portableClusterSize    = 8
	nonPortableClusterSize = 16
)

// launchAttrs is cfg's launch attributes as the backend takes them.
func launchAttrs(cfg *cuda.LaunchConfig) backend.LaunchAttrs {
	return backend.LaunchAttrs{
		Cooperative: cfg.Cooperative, Cluster: cfg.Cluster, ClusterScheduling: uint8(cfg.ClusterScheduling),
		Priority: int32(cfg.Priority), ProgrammaticSerialization: cfg.ProgrammaticSerialization,
		MemSyncDomain: uint8(cfg.MemSyncDomain),
	}
}

// checkAttrs checks cfg's launch attributes against the device, off the actor thread. What
// only the device can say (whether a cooperative grid fits) is checked by prepare.
func (d *Device) checkAttrs(k *Kernel, cfg *cuda.LaunchConfig) error {
	p := &d.limits
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: kernel %s: "+format, append([]any{ErrLaunchConfig, k.name}, a...)...)
	}
	if cfg.MemSyncDomain > cuda.MemSyncDomainRemote {
		return bad("memory synchronization domain %d is outside 0 (default) to 1 (remote)", cfg.MemSyncDomain)
	}
	if cfg.ClusterScheduling > cuda.ClusterSchedulingLoadBalancing {
		return bad("cluster scheduling policy %d is outside 0 to %d", cfg.ClusterScheduling, cuda.ClusterSchedulingLoadBalancing)
	}
	if cfg.Priority != 0 && (cfg.Priority < p.priorityGreatest || cfg.Priority > p.priorityLeast) {
		return bad("priority %d is outside the device's range %d (lowest) to %d (highest)", cfg.Priority, p.priorityLeast, p.priorityGreatest)
	}
	if c := cfg.Cluster; c != (cuda.Dim3{}) || cfg.ClusterScheduling != 0 {
		if p.ccMajor < 9 {
			return bad("thread block clusters need compute capability 9.0, the device has %d.%d", p.ccMajor, p.ccMinor)
		}
		g := cfg.Grid
		switch {
		case c == (cuda.Dim3{}):
			// a scheduling preference for the kernel's compiled-in cluster shape
		case c.X == 0 || c.Y == 0 || c.Z == 0:
			return bad("cluster %v has a zero extent (use cuda.Dim)", c)
		case g.X%c.X != 0 || g.Y%c.Y != 0 || g.Z%c.Z != 0:
			return bad("cluster %v does not divide grid %v", c, g)
		default:
			limit := portableClusterSize
			if k.ctl.nonPortable.Load() {
				limit = nonPortableClusterSize
			}
			if c.Count() > uint64(limit) {
				more := ""
				if limit == portableClusterSize {
					more = " (up to 16 once the kernel allows non-portable cluster sizes)"
				}
				return bad("cluster %v holds %d blocks, more than the %d allowed%s", c, c.Count(), limit, more)
			}
		}
	}
	if cfg.Cooperative && !p.cooperative {
		return bad("the device does not support cooperative launches")
	}
	return nil
}

// prepare readies k on the device for a launch with cfg; on the actor thread. It raises the
// kernel's dynamic shared memory limit when cfg asks for more than the device's default (once
// per new high), and checks that a cooperative grid fits co-resident.
func (k *Kernel) prepare(rt backend.Device, cfg *cuda.LaunchConfig) error {
	if err := k.raiseShared(rt, cfg); err != nil {
		return err
	}
	if cfg.Cooperative {
		return k.checkCoResident(rt, cfg)
	}
	return nil
}

// raiseShared raises k's dynamic shared memory limit to what cfg asks when that is above the
// device's default and the limit set so far; on the actor thread.
func (k *Kernel) raiseShared(rt backend.Device, cfg *cuda.LaunchConfig) error {
	p := &k.mod.dev.limits
	need := int(cfg.SharedMem)
	if need <= p.defaultShared || need <= k.ctl.dynamicShared {
		return nil
	}
	if err := rt.FuncSetAttribute(k.h, backend.FuncAttrMaxDynamicSharedMemorySize, need); err != nil {
		return fmt.Errorf("%w: kernel %s: raising its dynamic shared memory limit to the %d bytes the launch asks (the device's opt-in limit is %d): %w",
			ErrLaunchConfig, k.name, need, p.MaxSharedMem, err)
	}
	k.ctl.dynamicShared = need
	k.ctl.coResident = nil
	return nil
}

// checkCoResident refuses a cooperative grid larger than the blocks the device holds at once.
func (k *Kernel) checkCoResident(rt backend.Device, cfg *cuda.LaunchConfig) error {
	block := int(cfg.Block.Count())
	key := [2]int{block, int(cfg.SharedMem)}
	perSM, ok := k.ctl.coResident[key]
	if !ok {
		n, err := rt.OccupancyMaxActiveBlocksPerSM(k.h, block, uint64(cfg.SharedMem), backend.OccupancyDefault)
		if err != nil {
			return fmt.Errorf("gpuactor: kernel %s: occupancy for a cooperative launch: %w", k.name, err)
		}
		if k.ctl.coResident == nil {
			k.ctl.coResident = map[[2]int]int{}
		}
		k.ctl.coResident[key], perSM = n, n
	}
	sms := k.mod.dev.limits.multiprocessors
	if most := uint64(perSM) * uint64(sms); cfg.Grid.Count() > most {
		return fmt.Errorf("%w: kernel %s: a cooperative grid of %d blocks exceeds the %d that can be resident at once (%d blocks of %d threads and %d bytes of shared memory per multiprocessor × %d multiprocessors)",
			ErrLaunchConfig, k.name, cfg.Grid.Count(), most, perSM, block, cfg.SharedMem, sms)
	}
	return nil
}

// launchEx readies the kernel and launches the spec with attrs on stream h; on the actor
// thread, after resolve.
func (s *LaunchSpec) launchEx(rt backend.Device, h backend.Stream, attrs backend.LaunchAttrs) error {
	if err := s.k.prepare(rt, &s.cfg); err != nil {
		return err
	}
	return rt.LaunchEx(s.k.h, s.cfg.Grid, s.cfg.Block, s.cfg.SharedMem, h, s.args, attrs)
}

// LaunchTriggering checks a launch of k with cfg and args, then queues it on s with e as its
// programmatic event (cudaLaunchAttributeProgrammaticEvent): a record of e that completes
// once every block of the kernel has triggered programmatic completion or finished. e must be
// an event of s's device made with cudaEventDisableTiming. The future completes when the GPU
// has run the kernel.
func LaunchTriggering(ctx context.Context, s *Stream, k *Kernel, cfg cuda.LaunchConfig, e *Event, args []any) *Future {
	if s == nil {
		return actor.Completed(struct{}{}, Invalid("launch on a nil stream"))
	}
	spec, err := PrepareLaunch(s.dev, k, cfg, args)
	if err != nil {
		return actor.Completed(struct{}{}, err)
	}
	if e == nil {
		return actor.Completed(struct{}{}, Invalid("programmatic event of a launch of kernel %s: nil event", k.name))
	}
	if e.dev != s.dev {
		return actor.Completed(struct{}{}, WrongDevice("programmatic event", e.dev, s.dev))
	}
	if e.flags&backend.EventDisableTiming == 0 {
		return actor.Completed(struct{}{}, Invalid("programmatic event of a launch of kernel %s: the event must be made with DisableTiming", k.name))
	}
	n := e.issued.Add(1)
	f := Queue(ctx, s, func(rt backend.Device, _ *Tracker, h backend.Stream) error {
		defer e.noteRecorded(n)
		if err := e.alive(); err != nil {
			return err
		}
		if err := spec.resolve(); err != nil {
			return err
		}
		attrs := launchAttrs(&spec.cfg)
		attrs.ProgrammaticEvent = e.h
		if err := spec.launchEx(rt, h, attrs); err != nil {
			return fmt.Errorf("gpuactor: launching %s: %w", spec.k.name, err)
		}
		return nil
	})
	e.last.Store(f)
	return f
}
