package sim

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpuactor/gpuactor/cudaerr"
)

// FaultPlan (sim.FaultPlan in the public API) injects failures into one simulated device, so
// that supervisors, schedulers and users' own code meet faults without a GPU. Operations are
// the tasks the device's streams run (launches, copies, memsets, host functions, event
// records, waits), counted from 1 in the order they start.
type FaultPlan struct {
	// StickyAt: the device faults with Code as operation StickyAt runs (0: never). StickyRate:
	// each operation faults so with this chance.
	StickyAt   int
	StickyRate float64
	// Code is the sticky error (default cudaerr.LaunchFailure).
	Code cudaerr.Code
	// LostAt: the device is lost as operation LostAt runs: every call fails from then on with
	// cudaerr.DevicesUnavailable, as when a GPU falls off the bus (0: never).
	LostAt int
	// AllocFailRate: each allocation (cudaMalloc, cudaMallocAsync, cudaHostAlloc) fails with
	// cudaerr.MemoryAllocation with this chance; the device goes on.
	AllocFailRate float64
	// SlowRate: each operation takes SlowBy longer with this chance.
	SlowRate float64
	SlowBy   time.Duration
	// Seed seeds the chances (0: a fixed seed of its own, so that runs repeat).
	Seed uint64
}

// WithFaults injects plan's failures into device ordinal.
func WithFaults(ordinal int, plan FaultPlan) Option {
	return func(c *config) {
		if c.faults == nil {
			c.faults = map[int]FaultPlan{}
		}
		c.faults[ordinal] = plan
	}
}

// injector carries out a device's FaultPlan.
type injector struct {
	plan FaultPlan
	ops  atomic.Int64
	mu   sync.Mutex // rng
	rng  *rand.Rand
}

func newInjector(plan FaultPlan, ordinal int) *injector {
	if plan.Code == 0 {
		plan.Code = cudaerr.LaunchFailure
	}
	seed := plan.Seed
	if seed == 0 {
		seed = 0x9e3779b97f4a7c15
	}
	return &injector{plan: plan, rng: rand.New(rand.NewPCG(seed, uint64(ordinal)))}
}

func (in *injector) chance(p float64) bool {
	if p <= 0 {
		return false
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.rng.Float64() < p
}

// beforeOp runs as each operation starts on one of d's streams: it faults the device, loses
// it, or slows the operation, as the plan says.
func (d *device) beforeOp(name string) {
	in := d.inject
	if in == nil {
		return
	}
	n := in.ops.Add(1)
	p := in.plan
	switch {
	case p.LostAt > 0 && n == int64(p.LostAt):
		d.setFault(cudaerr.DevicesUnavailable, fmt.Sprintf("injected: the device was lost as operation %d (%s) ran", n, name))
	case p.StickyAt > 0 && n == int64(p.StickyAt), in.chance(p.StickyRate):
		d.setFault(p.Code, fmt.Sprintf("injected: %s as operation %d (%s) ran", p.Code.Name(), n, name))
	}
	if in.chance(p.SlowRate) {
		time.Sleep(p.SlowBy)
	}
}

// allocFails reports whether the plan fails this allocation.
func (d *device) allocFails() bool {
	return d.inject != nil && d.inject.chance(d.inject.plan.AllocFailRate)
}

// Fail faults device ordinal now with sticky code (cudaerr.LaunchFailure when code is not
// sticky): every later call on it fails, as after a kernel's fault.
func (b *Backend) Fail(ordinal int, code cudaerr.Code) error {
	if ordinal < 0 || ordinal >= len(b.devices) {
		return fmt.Errorf("sim: no device %d", ordinal)
	}
	if !code.Sticky() {
		code = cudaerr.LaunchFailure
	}
	b.devices[ordinal].setFault(code, "injected: "+code.Name())
	return nil
}

// Lose makes device ordinal lost now: every later call fails with cudaerr.DevicesUnavailable.
func (b *Backend) Lose(ordinal int) error {
	if ordinal < 0 || ordinal >= len(b.devices) {
		return fmt.Errorf("sim: no device %d", ordinal)
	}
	b.devices[ordinal].setFault(cudaerr.DevicesUnavailable, "injected: the device was lost")
	return nil
}
