//go:build linux

package device_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
)

// On an isolated device, on the simulator and on a GPU, a kernel's sticky fault is reported at
// the stream's next check, and the device's failure names the launch it followed.
func TestIsolatedStickyFaultNamesItsLaunch(t *testing.T) {
	isolatedBackends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev, err := device.Open(ctx, 0, opts...)
		require.NoError(t, err)
		defer dev.Close()
		err = faultOnce(t, ctx, dev)
		require.ErrorIs(t, err, device.ErrDeviceFailed)
		name := "oob"
		if dev.Backend() != device.BackendSim {
			name = "oob_store"
		}
		assert.Contains(t, dev.Err().Error(), "sticky fault after the kernel "+name+" launched on stream")
	})
}
