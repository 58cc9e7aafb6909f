// Package backendsel opens the backend a configuration names (cuda, sim or auto), for package
// device and for an isolated device's worker (package isolate), which opens it in its own
// process from the spec its parent passed in its environment.
package backendsel

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"go.uber.org/zap"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/cudart"
	"github.com/gpuactor/gpuactor/internal/sim"
)

// The backend kinds, as package device's BackendKind spells them.
const (
	Auto = "auto"
	CUDA = "cuda"
	Sim  = "sim"
)

// ErrBackend is package device's ErrBackend: the requested backend cannot be used here.
var ErrBackend = errors.New("gpuactor: backend unavailable")

// Select opens the backend of kind: for sim, m's (DefaultMachine when m is nil); for auto,
// cuda when libcudart loads and sees a device, else sim, logging the choice. It returns the
// kind it resolved to and, for sim, the machine it used.
func Select(kind string, m *sim.Machine, log *zap.Logger) (backend.Backend, string, *sim.Machine, error) {
	switch kind {
	case Sim:
		if m == nil {
			var err error
			if m, err = DefaultMachine(); err != nil {
				return nil, "", nil, err
			}
		}
		return m.Backend(), Sim, m, nil
	case CUDA:
		rt, err := cudart.Load()
		if err != nil {
			return nil, "", nil, fmt.Errorf("%w: cuda: %w", ErrBackend, err)
		}
		return cudart.NewBackend(rt), CUDA, nil, nil
	case Auto:
		rt, err := cudart.Load()
		if err != nil {
			log.Info("gpuactor backend: sim (libcudart not loadable)", zap.Error(err))
			return Select(Sim, m, log)
		}
		b := cudart.NewBackend(rt)
		n, err := b.DeviceCount()
		if err != nil || n == 0 {
			log.Info("gpuactor backend: sim (no usable CUDA device)",
				zap.String("library", rt.Path()), zap.Int("devices", n), zap.Error(err))
			return Select(Sim, m, log)
		}
		log.Info("gpuactor backend: cuda", zap.String("library", rt.Path()), zap.Int("devices", n))
		return b, CUDA, nil, nil
	}
	return nil, "", nil, fmt.Errorf("%w: unknown backend %q (want cuda, sim or auto)", ErrBackend, kind)
}

// EnvWorker carries an isolated device's WorkerSpec to its worker process.
const EnvWorker = "GPUACTOR_ISOLATED"

// WorkerSpec is what a worker needs to open the backend its parent asked for.
type WorkerSpec struct {
	Backend string
	Sim     *sim.Spec `json:",omitempty"`
}

// Env is spec as the EnvWorker=... entry of the worker's environment.
func (spec WorkerSpec) Env() (string, error) {
	raw, err := json.Marshal(spec)
	if err != nil {
		return "", err
	}
	return EnvWorker + "=" + string(raw), nil
}

// WorkerBackend opens, in a worker process, the backend its parent named in EnvWorker, and
// unsets it: the worker's own children are not workers.
func WorkerBackend() (backend.Backend, error) {
	raw, ok := os.LookupEnv(EnvWorker)
	if !ok {
		return nil, fmt.Errorf("gpuactor worker: %s is not set: was this worker started by device.Open with Isolated?", EnvWorker)
	}
	_ = os.Unsetenv(EnvWorker)
	var spec WorkerSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		return nil, fmt.Errorf("gpuactor worker: reading %s: %w", EnvWorker, err)
	}
	var m *sim.Machine
	if spec.Sim != nil {
		m = sim.NewMachine(*spec.Sim)
	}
	be, _, _, err := Select(spec.Backend, m, zap.NewNop())
	return be, err
}
