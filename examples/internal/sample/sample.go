// Package sample holds what gpuactor's example programs share: their common -device,
// -backend and -v flags and the device options these ask for, the line that names the device
// they run on, deferred cleanups that keep their errors, and the PASS or FAIL they end with;
// and for the ports of NVIDIA's samples, what those share: glibc's rand() (CRand) and
// helper_cuda.h's table of architectures (ArchName, CoresPerSM).
package sample

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/gpuactor/gpuactor/device"
)

// Options turns -backend (cuda, sim, auto; "" leaves the choice to GPUACTOR_BACKEND, else
// auto) and -v (log which backend was chosen) into device options.
func Options(backend string, verbose bool) []device.Option {
	var opts []device.Option
	if backend != "" {
		opts = append(opts, device.WithBackend(device.BackendKind(backend)))
	}
	if verbose {
		h := slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})
		opts = append(opts, device.WithLogger(slog.New(h)))
	}
	return opts
}

// Describe prints the line each example starts with: which device, and on which backend.
func Describe(dev *device.Device) {
	p := dev.Properties()
	fmt.Printf("device %d: %s (compute %s, %s backend)\n", dev.Ordinal(), p.Name, p.ComputeCapability, dev.Backend())
}

// Keep runs release and stores its error in *err when *err is nil: for deferred cleanups whose
// errors a run function should still report (defer sample.Keep(&err, dev.Close)).
func Keep(err *error, release func() error) {
	if e := release(); *err == nil {
		*err = e
	}
}
