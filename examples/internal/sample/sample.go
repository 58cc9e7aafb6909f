// Package sample holds what gpuactor's example programs share: turning their common -backend
// and -v flags into device options, and the line that names the device they run on.
package sample

import (
	"fmt"

	"go.uber.org/zap"

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
		if logger, err := zap.NewDevelopment(); err == nil {
			opts = append(opts, device.WithLogger(logger))
		}
	}
	return opts
}

// Describe prints the line each example starts with: which device, and on which backend.
func Describe(dev *device.Device) {
	p := dev.Properties()
	fmt.Printf("device %d: %s (compute %s, %s backend)\n", dev.Ordinal(), p.Name, p.ComputeCapability, dev.Backend())
}
