// Package sim is gpuactor's CPU simulator of a GPU machine: devices with memory in host RAM,
// in-order streams, events, and kernels run as Go functions, with speeds and failures to
// order. A program or a test opens devices on it with device.WithSimulator(s), so that code
// written for GPUs runs, and meets faults, without one:
//
//	s := sim.New(sim.WithDevices(4), sim.WithFaults(1, sim.FaultPlan{StickyAt: 100}))
//	devs, err := device.OpenAll(ctx, device.WithSimulator(s))
//
// Devices opened on one Simulator share it, so memory, events and streams behave across them
// as on one real machine. Without a simulator of its own, the sim backend
// (device.WithBackend(device.BackendSim), or auto on a machine without a GPU) makes a default
// one for each Open or OpenAll.
package sim

import (
	"github.com/gpuactor/gpuactor/cudaerr"
	isim "github.com/gpuactor/gpuactor/internal/sim"
)

// Simulator is a simulated machine. Its methods are safe for concurrent use.
type Simulator isim.Machine

// New makes a simulated machine: by default two devices of 16 GiB each (RAM is only used for
// what is allocated), at full speed, that fail only as a program makes them.
func New(opts ...Option) *Simulator {
	var c config
	for _, o := range opts {
		o(&c)
	}
	return (*Simulator)(isim.NewMachine(c.spec, c.extra()...))
}

// Fail fails simulated device ordinal now with sticky code (cudaerr.LaunchFailure when code
// is not sticky), as a kernel's fault would: every later call on it fails, and so do the
// operations it had not finished; so do the machine's other devices, unless it was made with
// WithConfinedFaults. It returns an error only for an ordinal the machine lacks.
func (s *Simulator) Fail(ordinal int, code cudaerr.Code) error {
	return (*isim.Machine)(s).Backend().Fail(ordinal, code)
}

// Lose makes simulated device ordinal lost now: every later call fails with
// cudaerr.DevicesUnavailable, as when a GPU falls off the bus. It returns an error only for an
// ordinal the machine lacks.
func (s *Simulator) Lose(ordinal int) error { return (*isim.Machine)(s).Backend().Lose(ordinal) }

// Devices is how many devices the machine has.
func (s *Simulator) Devices() int {
	n, _ := (*isim.Machine)(s).Backend().DeviceCount()
	return n
}
