package device

import (
	"context"
	"fmt"
	"strings"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// ByPCIBusID is the ordinal of the device at PCI address busID (cudaDeviceGetByPCIBusId), in
// any form the runtime accepts: "domain:bus:device.function" as Properties.PCIBusID has it
// ("0000:65:00.0"), "domain:bus:device" or "bus:device.function", in hex. It opens no device.
// An address no device has is an error wrapping cudaerr.InvalidDevice; an empty one is
// ErrInvalidArgument. An isolated device's backend cannot answer it.
func ByPCIBusID(ctx context.Context, busID string, opts ...Option) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if strings.TrimSpace(busID) == "" {
		return 0, core.Invalid("ByPCIBusID of an empty PCI address")
	}
	be, err := selectBackend(newConfig(opts))
	if err != nil {
		return 0, err
	}
	r, ok := be.(backend.PCIResolver)
	if !ok {
		return 0, core.Invalid("the %s backend cannot look a device up by its PCI address", be.Name())
	}
	n, err := r.DeviceByPCIBusID(busID)
	if err != nil {
		return 0, fmt.Errorf("gpuactor: finding the device at PCI address %q: %w", busID, err)
	}
	return n, nil
}
