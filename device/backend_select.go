package device

import (
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/backendsel"
	isim "github.com/gpuactor/gpuactor/internal/sim"
	"github.com/gpuactor/gpuactor/sim"
)

// selectBackend resolves the configured backend kind to a runtime, and records in c the kind
// it resolved to and, on the simulator, the machine.
func selectBackend(c *config) (backend.Backend, error) {
	be, kind, m, err := backendsel.Select(string(c.backend), (*isim.Machine)(c.simulator), c.logger)
	if err != nil {
		return nil, err
	}
	c.backend = BackendKind(kind)
	if m != nil {
		c.simulator = (*sim.Simulator)(m)
	}
	return be, nil
}
