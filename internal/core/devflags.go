package core

import (
	"fmt"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// openBackend opens the device's backend device on the actor thread, with context flags when
// flags is set: those must reach the backend before the primary context is made, which only a
// backend.FlagOpener can do.
func (d *Device) openBackend(flags *uint32) (backend.Device, error) {
	if flags == nil {
		return d.be.Open(d.ordinal)
	}
	fo, ok := d.be.(backend.FlagOpener)
	if !ok {
		return nil, Invalid("device %d: the %s backend cannot open a device with context flags %#x", d.ordinal, d.be.Name(), *flags)
	}
	rt, err := fo.OpenWithFlags(d.ordinal, *flags)
	if err != nil {
		return nil, fmt.Errorf("gpuactor: opening device %d with context flags %#x: %w", d.ordinal, *flags, err)
	}
	return rt, nil
}
