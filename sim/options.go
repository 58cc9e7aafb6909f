package sim

import (
	"log/slog"

	"github.com/gpuactor/gpuactor/internal/logging"
	isim "github.com/gpuactor/gpuactor/internal/sim"
)

// Option configures New.
type Option func(*config)

type config struct {
	spec isim.Spec // what crosses to an isolated device's worker
	log  *slog.Logger
}

func (c *config) extra() []isim.Option {
	if c.log == nil {
		return nil
	}
	return []isim.Option{isim.WithLogger(logging.Zap(c.log))}
}

// WithDevices sets how many devices the machine has (default 2; n <= 0 keeps the default).
func WithDevices(n int) Option { return func(c *config) { c.spec.Devices = n } }

// WithMemory sets each device's memory capacity in bytes (default 16 GiB, at most 256 GiB;
// RAM is only used for what is allocated).
func WithMemory(bytes uint64) Option { return func(c *config) { c.spec.Memory = bytes } }

// WithConfinedFaults keeps a sticky fault (a kernel's, or one of WithFaults or Fail) to the
// device it happened on. Without it, a sticky fault fails every device of the machine, as the
// CUDA runtime fails every GPU of a process after one (docs/faults.md): in one process, no
// device outlives another's kernel fault. On GPUs, devices that must outlive each other's
// faults run isolated (device.Isolated), one worker process each; WithConfinedFaults gives
// in-process simulated devices that behaviour, to test fail-over without worker processes.
func WithConfinedFaults() Option { return func(c *config) { c.spec.Confined = true } }

// WithSlowdown makes device ordinal run every stream operation factor times as long as the
// simulator takes (it waits out the difference after each): devices of unequal speed, for
// testing how work spreads over them. factor <= 1 leaves it at full speed.
func WithSlowdown(ordinal int, factor float64) Option {
	return func(c *config) {
		if c.spec.Slowdown == nil {
			c.spec.Slowdown = map[int]float64{}
		}
		c.spec.Slowdown[ordinal] = factor
	}
}

// FaultPlan injects failures into one simulated device (WithFaults), so that supervisors,
// groups and users' own code meet faults without a GPU: a sticky fault at the Nth operation
// (StickyAt) or at a rate (StickyRate) with a code (Code), a lost device (LostAt), failed
// allocations (AllocFailRate), slow operations (SlowRate, SlowBy), and a Seed for the
// chances. Operations are what the device's streams run (launches, copies, memsets, host
// functions, event records, waits), counted from 1 in the order they start. It is the
// simulator's own type, whose fields are documented where it is defined: one definition, so
// that no copy of it can drift.
type FaultPlan = isim.FaultPlan

// WithFaults injects plan's failures into device ordinal. A device opened isolated
// (device.Isolated) runs in a worker of its own machine: the plan goes to the first worker
// that serves ordinal only, so that the worker a restart starts in its place is healthy
// instead of failing the same way, and so on for good.
func WithFaults(ordinal int, plan FaultPlan) Option {
	return func(c *config) {
		if c.spec.Faults == nil {
			c.spec.Faults = map[int]FaultPlan{}
		}
		c.spec.Faults[ordinal] = plan
	}
}

// WithLogger sends the simulator's reports (a device failing, a kernel or host function that
// panicked) to l; the default, and a nil l, log nowhere. An isolated device's worker makes its
// own machine, which logs nowhere.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }
