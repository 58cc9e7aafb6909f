package sim

import (
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/gpuactor/gpuactor/cudaerr"
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
	w    workers
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

// Injector injects faults into a device served elsewhere: an isolated device's worker, which
// runs a machine of its own made from this one's Spec.
type Injector interface {
	Fail(ordinal int, code cudaerr.Code) error
	Lose(ordinal int) error
}

// workers are the injectors attached to a machine, by ordinal, and the fault plans the
// machine's workers have taken.
type workers struct {
	mu      sync.Mutex
	next    int
	by      map[int]map[int]Injector // ordinal → attach id → injector
	planned map[int]bool             // ordinals whose FaultPlan a worker has taken
}

// WorkerSpec is the Spec a new worker serving device ordinal makes its machine from: this
// machine's, with ordinal's fault plan given to the first such worker only, so that a worker
// started to replace one the plan failed does not fail the same way, and so on for good.
func (m *Machine) WorkerSpec(ordinal int) Spec {
	s := m.spec
	plan, ok := s.Faults[ordinal]
	s.Faults = nil
	m.w.mu.Lock()
	defer m.w.mu.Unlock()
	if ok && !m.w.planned[ordinal] {
		if m.w.planned == nil {
			m.w.planned = map[int]bool{}
		}
		m.w.planned[ordinal] = true
		s.Faults = map[int]FaultPlan{ordinal: plan}
	}
	return s
}

// Attach registers inj as serving device ordinal of this machine, until detach is called:
// Inject reaches it.
func (m *Machine) Attach(ordinal int, inj Injector) (detach func()) {
	m.w.mu.Lock()
	defer m.w.mu.Unlock()
	if m.w.by == nil {
		m.w.by = map[int]map[int]Injector{}
	}
	if m.w.by[ordinal] == nil {
		m.w.by[ordinal] = map[int]Injector{}
	}
	id := m.w.next
	m.w.next++
	m.w.by[ordinal][id] = inj
	return func() {
		m.w.mu.Lock()
		defer m.w.mu.Unlock()
		delete(m.w.by[ordinal], id)
	}
}

// Inject runs fn on every injector attached for device ordinal and reports whether there was
// any; its error is theirs, joined.
func (m *Machine) Inject(ordinal int, fn func(Injector) error) (bool, error) {
	m.w.mu.Lock()
	injs := slices.Collect(maps.Values(m.w.by[ordinal]))
	m.w.mu.Unlock()
	var errs []error
	for _, inj := range injs {
		errs = append(errs, fn(inj))
	}
	return len(injs) > 0, errors.Join(errs...)
}
