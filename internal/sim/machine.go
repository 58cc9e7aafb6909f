package sim

import (
	"maps"
	"slices"
)

// Spec is how a simulated machine is made, as plain data: an isolated device's worker
// process gets it (as JSON) and makes a machine like its parent's.
type Spec struct {
	Devices  int               // 0: DefaultDevices
	Memory   uint64            // 0: DefaultMemory
	Slowdown map[int]float64   // ordinal → factor (WithSlowdown)
	Faults   map[int]FaultPlan // ordinal → plan (WithFaults)
	Confined bool              // WithConfinedFaults
}

// Options are New's options for s, in a fixed order.
func (s Spec) Options() []Option {
	var so []Option
	if s.Devices > 0 {
		so = append(so, WithDevices(s.Devices))
	}
	if s.Memory > 0 {
		so = append(so, WithMemory(s.Memory))
	}
	for _, ord := range slices.Sorted(maps.Keys(s.Slowdown)) {
		so = append(so, WithSlowdown(ord, s.Slowdown[ord]))
	}
	for _, ord := range slices.Sorted(maps.Keys(s.Faults)) {
		so = append(so, WithFaults(ord, s.Faults[ord]))
	}
	if s.Confined {
		so = append(so, WithConfinedFaults())
	}
	return so
}

// Machine is a simulated machine with the Spec it was made from. The public package sim's
// Simulator is a defined type over it, so that package device reaches the backend through a
// conversion while users see only Simulator's own methods.
type Machine struct {
	b    *Backend
	spec Spec
}

// NewMachine makes a machine of spec; extra options (a logger) are not part of the spec and
// do not cross to a worker.
func NewMachine(spec Spec, extra ...Option) *Machine {
	return &Machine{b: New(append(spec.Options(), extra...)...), spec: spec}
}

// Backend is the machine's backend.
func (m *Machine) Backend() *Backend { return m.b }

// Spec is what the machine was made from.
func (m *Machine) Spec() Spec { return m.spec }
