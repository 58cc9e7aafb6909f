package sample

import (
	"flag"
	"fmt"
	"os"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/sim"
)

// Flags are the command-line flags the examples share: the device, the backend, and whether
// to log which backend was chosen.
type Flags struct {
	Ordinal int
	Backend string
	Verbose bool
}

// Register adds -device, -backend and -v to the command line.
func (f *Flags) Register() {
	flag.IntVar(&f.Ordinal, "device", 0, "device ordinal")
	f.RegisterBackend()
}

// RegisterBackend adds -backend and -v: for an example that uses every device.
func (f *Flags) RegisterBackend() {
	flag.StringVar(&f.Backend, "backend", "", "cuda, sim or auto (default: $GPUACTOR_BACKEND, else auto)")
	flag.BoolVar(&f.Verbose, "v", false, "log which backend was chosen")
}

// Options are the device options the flags ask for (see Options).
func (f Flags) Options() []device.Option { return Options(f.Backend, f.Verbose) }

// Finish ends an example: PASS, or FAIL with err and exit status 1.
func Finish(err error) {
	if err != nil {
		fmt.Println("FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("PASS")
}

// OptionsOn is Options on the devices of sim when sim is not nil: the simulated machine a
// test gives an example in place of the real one.
func (f Flags) OptionsOn(machine *sim.Simulator) []device.Option {
	opts := f.Options()
	if machine != nil {
		opts = append(opts, device.WithSimulator(machine))
	}
	return opts
}

// CloseAll closes every device of devs, keeping the first error in *err when *err is nil:
// for a deferred call (defer sample.CloseAll(&err, devs)).
func CloseAll(err *error, devs []*device.Device) {
	for _, d := range devs {
		Keep(err, d.Close)
	}
}
