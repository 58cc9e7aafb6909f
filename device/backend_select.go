package device

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/cudart"
	"github.com/gpuactor/gpuactor/internal/sim"
)

// Simulator is a simulated machine: devices with memory in host RAM, in-order streams, events
// and kernels run as Go functions. Devices opened with WithSimulator(s) share it, so memory,
// events and streams behave across them as on one real machine.
type Simulator struct {
	b   *sim.Backend
	cfg simConfig // how it was made: an isolated device's worker makes one like it
}

// SimOption configures NewSimulator.
type SimOption func(*simConfig)

// simConfig is plain data, so that it can cross to a worker process (isolated.go).
type simConfig struct {
	Devices  int
	Memory   uint64
	Slowdown map[int]float64
	Faults   map[int]SimFaultPlan
	Confined bool
}

// SimDevices sets how many devices the simulator has (default 2).
func SimDevices(n int) SimOption { return func(c *simConfig) { c.Devices = n } }

// SimMemory sets each simulated device's memory capacity in bytes (default 16 GiB; RAM is only
// used for what is allocated).
func SimMemory(bytes uint64) SimOption { return func(c *simConfig) { c.Memory = bytes } }

// SimConfinedFaults keeps a simulated sticky fault (a kernel's, or SimFaults' and Fail's) to
// the device it happened on. Without it, a sticky fault fails every device of the simulated
// machine, as the CUDA runtime fails every GPU of a process after one (docs/faults.md): in one
// process, no device outlives another's kernel fault. On GPUs, devices that must outlive each
// other's faults run Isolated, one worker process each; SimConfinedFaults gives in-process
// simulated devices that behaviour, to test fail-over without worker processes.
func SimConfinedFaults() SimOption { return func(c *simConfig) { c.Confined = true } }

// SimSlowdown makes simulated device ordinal run every stream operation factor times as long
// as the simulator takes (it waits out the difference after each): devices of unequal speed,
// for testing how work spreads over them. factor <= 1 leaves it at full speed.
func SimSlowdown(ordinal int, factor float64) SimOption {
	return func(c *simConfig) {
		if c.Slowdown == nil {
			c.Slowdown = map[int]float64{}
		}
		c.Slowdown[ordinal] = factor
	}
}

// SimFaultPlan injects failures into one simulated device (SimFaults), so that supervisors,
// groups and users' own code meet faults without a GPU. Operations are what the device's
// streams run (launches, copies, memsets, host functions, event records, waits), counted from
// 1 in the order they start.
type SimFaultPlan struct {
	// StickyAt: the device fails with Code as operation StickyAt runs (0: never); StickyRate:
	// each operation fails it so with this chance. Every later call then fails, as after a
	// kernel's fault.
	StickyAt   int
	StickyRate float64
	// Code is the sticky error (default cudaerr.LaunchFailure).
	Code cudaerr.Code
	// LostAt: the device is lost as operation LostAt runs: every call fails from then on with
	// cudaerr.DevicesUnavailable, as when a GPU falls off the bus (0: never).
	LostAt int
	// AllocFailRate: each allocation (device, stream-ordered, pinned) fails with
	// cudaerr.MemoryAllocation with this chance; the device goes on.
	AllocFailRate float64
	// SlowRate: each operation takes SlowBy longer with this chance.
	SlowRate float64
	SlowBy   time.Duration
	// Seed seeds the chances (0: a fixed seed, so that runs repeat).
	Seed uint64
}

// SimFaults injects plan's failures into simulated device ordinal.
func SimFaults(ordinal int, plan SimFaultPlan) SimOption {
	return func(c *simConfig) {
		if c.Faults == nil {
			c.Faults = map[int]SimFaultPlan{}
		}
		c.Faults[ordinal] = plan
	}
}

// Fail fails simulated device ordinal now with sticky code (cudaerr.LaunchFailure when code
// is not sticky), as a kernel's fault would: every later call on it fails, and so do the
// operations it had not finished; so do the machine's other devices, unless it was made with
// SimConfinedFaults.
func (s *Simulator) Fail(ordinal int, code cudaerr.Code) error { return s.b.Fail(ordinal, code) }

// Lose makes simulated device ordinal lost now: every later call fails with
// cudaerr.DevicesUnavailable, as when a GPU falls off the bus.
func (s *Simulator) Lose(ordinal int) error { return s.b.Lose(ordinal) }

// NewSimulator makes a simulated machine.
func NewSimulator(opts ...SimOption) *Simulator {
	var c simConfig
	for _, o := range opts {
		o(&c)
	}
	return c.build()
}

func (c simConfig) build() *Simulator {
	var so []sim.Option
	if c.Devices > 0 {
		so = append(so, sim.WithDevices(c.Devices))
	}
	if c.Memory > 0 {
		so = append(so, sim.WithMemory(c.Memory))
	}
	for _, ord := range slices.Sorted(maps.Keys(c.Slowdown)) {
		so = append(so, sim.WithSlowdown(ord, c.Slowdown[ord]))
	}
	for _, ord := range slices.Sorted(maps.Keys(c.Faults)) {
		so = append(so, sim.WithFaults(ord, sim.FaultPlan(c.Faults[ord])))
	}
	if c.Confined {
		so = append(so, sim.WithConfinedFaults())
	}
	return &Simulator{b: sim.New(so...), cfg: c}
}

// selectBackend resolves the configured backend kind to a runtime.
func selectBackend(c *config) (backend.Backend, error) {
	switch c.backend {
	case BackendSim:
		if c.simulator == nil {
			c.simulator = NewSimulator()
		}
		return c.simulator.b, nil
	case BackendCUDA:
		rt, err := cudart.Load()
		if err != nil {
			return nil, fmt.Errorf("%w: cuda: %w", ErrBackend, err)
		}
		return cudart.NewBackend(rt), nil
	case BackendAuto:
		rt, err := cudart.Load()
		if err != nil {
			c.logger.Info("gpuactor backend: sim (libcudart not loadable)", zap.Error(err))
			c.backend = BackendSim
			return selectBackend(c)
		}
		b := cudart.NewBackend(rt)
		n, err := b.DeviceCount()
		if err != nil || n == 0 {
			c.logger.Info("gpuactor backend: sim (no usable CUDA device)",
				zap.String("library", rt.Path()), zap.Int("devices", n), zap.Error(err))
			c.backend = BackendSim
			return selectBackend(c)
		}
		c.logger.Info("gpuactor backend: cuda", zap.String("library", rt.Path()), zap.Int("devices", n))
		c.backend = BackendCUDA
		return b, nil
	}
	return nil, fmt.Errorf("%w: unknown backend %q (want cuda, sim or auto)", ErrBackend, c.backend)
}
