package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
)

// A device is found by its PCI address in each form the runtime accepts; anything else is
// refused.
func TestDeviceByPCIBusID(t *testing.T) {
	b := NewMachine(Spec{Devices: 3}).Backend()
	for id, want := range map[string]int{"0000:01:00.0": 0, "0000:02:00": 1, "03:00.0": 2, "0:3:0.0": 2} {
		n, err := b.DeviceByPCIBusID(id)
		require.NoError(t, err, id)
		assert.Equal(t, want, n, id)
	}
	_, err := b.DeviceByPCIBusID("0000:09:00.0")
	require.ErrorIs(t, err, cudaerr.InvalidDevice)
	for _, bad := range []string{"", "zz:00.0", "1:2:3:4", "gpu0"} {
		_, err := b.DeviceByPCIBusID(bad)
		require.ErrorIs(t, err, cudaerr.InvalidValue, bad)
	}
}
