package backendsel

import (
	"fmt"
	"os"
	"strconv"

	"github.com/gpuactor/gpuactor/internal/sim"
)

// EnvSimDevices sets how many devices the default simulated machine has (the sim backend
// without a simulator of its own); unset or empty, sim.DefaultDevices.
const EnvSimDevices = "GPUACTOR_SIM_DEVICES"

// maxSimDevices bounds EnvSimDevices: a typo of a few digits more should fail, not make
// millions of devices.
const maxSimDevices = 1024

// DefaultMachine makes the simulated machine the sim backend uses when it was given none:
// sim.DefaultDevices devices, or as many as EnvSimDevices says. A value that is not a whole
// number from 1 to 1024 is an error naming the variable.
func DefaultMachine() (*sim.Machine, error) {
	var spec sim.Spec
	if v := os.Getenv(EnvSimDevices); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxSimDevices {
			return nil, fmt.Errorf("%w: %s=%q: want a number of devices from 1 to %d", ErrBackend, EnvSimDevices, v, maxSimDevices)
		}
		spec.Devices = n
	}
	return sim.NewMachine(spec), nil
}
