package remote

import (
	"github.com/gpuactor/gpuactor/cudaerr"
)

// injector is a worker backend that takes injected faults: the simulator's.
type injector interface {
	Fail(ordinal int, code cudaerr.Code) error
	Lose(ordinal int) error
}

// Fail fails device ordinal of the worker's backend now with sticky code, as a kernel's fault
// would (a simulator's: sim.Simulator.Fail of an isolated device). It returns once the worker
// has injected the fault; the device meets it at its next operation. A worker whose backend
// takes no injected faults (a GPU's) refuses with cudaerr.NotSupported.
func (b *Backend) Fail(ordinal int, code cudaerr.Code) error {
	e := request(mInject)
	e.i64(int64(ordinal))
	e.u64(0)
	e.i64(int64(code))
	_, err := b.call(e)
	return err
}

// Lose makes device ordinal of the worker's backend lost now, as Fail does a fault.
func (b *Backend) Lose(ordinal int) error {
	e := request(mInject)
	e.i64(int64(ordinal))
	e.u64(1)
	e.i64(0)
	_, err := b.call(e)
	return err
}

// serveInject injects a fault into the worker's backend (Backend.Fail, Backend.Lose).
func (s *server) serveInject(in *dec, _ *enc) error {
	ordinal, lose, code := int(in.i64()), in.u64() != 0, cudaerr.Code(in.i64())
	if in.err != nil {
		return in.err
	}
	inj, ok := s.be.(injector)
	if !ok {
		return &cudaerr.Error{Op: "inject", Code: cudaerr.NotSupported, Message: "the worker's backend takes no injected faults (only the simulator's does)"}
	}
	if lose {
		return inj.Lose(ordinal)
	}
	return inj.Fail(ordinal, code)
}
