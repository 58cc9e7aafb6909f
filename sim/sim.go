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
//
// The collectives of package collective run on simulated devices too, functionally only: the
// results are NCCL's, with no model of its speed. A communicator's ranks meet through a
// loopback TCP root in the process that made its ID, so ranks on one Simulator, on several,
// and on isolated devices (worker processes) all work alike; docs/design/collectives-sim.md
// has the model.
package sim

import (
	"fmt"

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
//
// Device ordinal opened isolated (device.Isolated) on this simulator runs in a worker process
// of its own machine: Fail then fails that device in the worker running now, once, and returns
// once the worker has the fault, leaving the machine in this process alone; the device meets
// the fault at its next operation, and a worker started after (a restart) is healthy. Its
// error says why it did not reach a worker.
func (s *Simulator) Fail(ordinal int, code cudaerr.Code) error {
	m := (*isim.Machine)(s)
	if err := s.check(ordinal); err != nil {
		return err
	}
	if sent, err := m.Inject(ordinal, func(w isim.Injector) error { return w.Fail(ordinal, code) }); sent {
		return err
	}
	return m.Backend().Fail(ordinal, code)
}

// Lose makes simulated device ordinal lost now: every later call fails with
// cudaerr.DevicesUnavailable, as when a GPU falls off the bus. It returns an error only for an
// ordinal the machine lacks. An isolated device's worker running now takes it as it takes Fail.
func (s *Simulator) Lose(ordinal int) error {
	m := (*isim.Machine)(s)
	if err := s.check(ordinal); err != nil {
		return err
	}
	if sent, err := m.Inject(ordinal, func(w isim.Injector) error { return w.Lose(ordinal) }); sent {
		return err
	}
	return m.Backend().Lose(ordinal)
}

// check refuses an ordinal the machine lacks.
func (s *Simulator) check(ordinal int) error {
	if n := s.Devices(); ordinal < 0 || ordinal >= n {
		return fmt.Errorf("sim: no device %d (the machine has %d)", ordinal, n)
	}
	return nil
}

// Devices is how many devices the machine has.
func (s *Simulator) Devices() int {
	n, _ := (*isim.Machine)(s).Backend().DeviceCount()
	return n
}
