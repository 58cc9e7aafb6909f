package device_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/sim"
)

// A block size or shared memory the device cannot have is refused before the device is asked,
// saying which; a kernel of a closed module is refused; the device goes on.
func TestOccupancyBadInput(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev := openDev(t, []device.Option{device.WithSimulator(sim.New())})
	mod := saxpyModule(t, dev)
	k, err := mod.Kernel(ctx, "empty")
	require.NoError(t, err)
	props := dev.Properties()
	for _, c := range []struct {
		block, shared int
		says          string
	}{
		{0, 0, "block size 0"},
		{-1, 0, "block size -1"},
		{props.MaxThreadsPerBlock + 1, 0, "threads per block"},
		{128, -1, "-1 bytes of dynamic shared memory"},
		{128, props.SharedMemPerBlockOptin + 1, "dynamic shared memory"},
	} {
		_, err := k.MaxActiveBlocksPerSM(ctx, c.block, c.shared)
		require.ErrorIs(t, err, device.ErrInvalidArgument, c.says)
		assert.Contains(t, err.Error(), c.says)
		assert.Contains(t, err.Error(), "empty")
	}
	var nilKernel *device.Kernel
	_, err = nilKernel.MaxActiveBlocksPerSM(ctx, 128, 0)
	require.ErrorIs(t, err, device.ErrInvalidArgument)

	n, err := k.MaxActiveBlocksPerSM(ctx, 256, 0)
	require.NoError(t, err)
	assert.Positive(t, n)
	require.NoError(t, mod.Close(ctx))
	_, err = k.MaxActiveBlocksPerSM(ctx, 256, 0)
	require.ErrorIs(t, err, device.ErrClosed)
	testdev.RequireUsable(t, dev)
}
