package device_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
)

func TestUsageAndLimit(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, append(opts, device.WithMemoryLimit(3<<20)))
		require.Equal(t, device.Usage{Limit: 3 << 20}, dev.Stats().Memory)
		a, err := dev.MallocBytes(ctx, 2<<20)
		require.NoError(t, err)
		_, err = dev.MallocBytes(ctx, 2<<20)
		require.ErrorIs(t, err, device.ErrMemoryLimit)
		// Pinned host memory is counted but not limited: it is not the device's memory.
		h, err := dev.MallocPinnedBytes(ctx, 4<<20)
		require.NoError(t, err)
		u := dev.Stats().Memory
		require.Equal(t, device.KindUsage{Bytes: 2 << 20, Count: 1}, u.Device)
		require.Equal(t, device.KindUsage{Bytes: 4 << 20, Count: 1}, u.Pinned)
		require.Equal(t, uint64(2<<20), u.DeviceBytes())
		require.NoError(t, a.Close(ctx))
		require.NoError(t, h.Close(ctx))
		require.Equal(t, device.Usage{Limit: 3 << 20}, dev.Stats().Memory)
		testdev.RequireUsable(t, dev)
	})
}

// Buffers Close frees are uncounted too.
func TestUsageAfterClose(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev, err := device.Open(ctx, 0, opts...)
		require.NoError(t, err)
		_, err = dev.MallocBytes(ctx, 1<<20)
		require.NoError(t, err)
		_, err = dev.MallocPinnedBytes(ctx, 1<<20)
		require.NoError(t, err)
		require.NoError(t, dev.Close())
		require.Equal(t, device.Usage{}, dev.Stats().Memory)
	})
}
