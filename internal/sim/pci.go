package sim

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

var _ backend.PCIResolver = (*Backend)(nil)

// DeviceByPCIBusID finds the device whose PCI address is busID, in the forms the runtime
// accepts: "domain:bus:device.function", "domain:bus:device" or "bus:device.function", hex.
func (b *Backend) DeviceByPCIBusID(busID string) (int, error) {
	want, ok := parseBusID(busID)
	if !ok {
		return 0, newError("cudaDeviceGetByPCIBusId", cudaerr.InvalidValue, fmt.Sprintf("%q is not a PCI address", busID))
	}
	for _, d := range b.devices {
		if have, _ := parseBusID(d.busID); have == want {
			return d.ordinal, nil
		}
	}
	return 0, newError("cudaDeviceGetByPCIBusId", cudaerr.InvalidDevice, fmt.Sprintf("no simulated device is at %s", busID))
}

// parseBusID reads a PCI address into its domain, bus and device numbers.
func parseBusID(s string) ([3]uint64, bool) {
	var out [3]uint64
	s, _, _ = strings.Cut(s, ".") // the function is always 0
	parts := strings.Split(s, ":")
	if len(parts) == 2 {
		parts = append([]string{"0"}, parts...)
	}
	if len(parts) != 3 {
		return out, false
	}
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 16, 32)
		if err != nil {
			return out, false
		}
		out[i] = v
	}
	return out, true
}
