package device_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
)

// MemInfo follows allocations: free memory drops by at least a big allocation's size while
// it lives and comes back once it is freed; total stays the device's. Isolated devices answer
// the same through their worker.
func TestMemInfoFollowsAllocations(t *testing.T) {
	check := func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		free0, total, err := dev.MemInfo(ctx)
		require.NoError(t, err)
		require.Equal(t, dev.Properties().TotalMemory, total)
		// On a GPU other test processes may allocate and free meanwhile: the allocation is
		// an eighth of what is free (at most 8 GiB), and half of it must show.
		size, slack := uint64(256<<20), uint64(0)
		if dev.Backend() == device.BackendCUDA {
			size = min(max(size, free0/8), 8<<30)
			slack = size / 2
		}
		require.Greater(t, free0, 2*size, "room for the test's allocation")

		b, err := dev.MallocBytes(ctx, size)
		require.NoError(t, err)
		free1, total1, err := dev.MemInfo(ctx)
		require.NoError(t, err)
		require.Equal(t, total, total1)
		require.GreaterOrEqual(t, free0-min(free0, free1), size-slack, "free memory drops by the allocation (%d, then %d)", free0, free1)

		require.NoError(t, b.Close(ctx))
		require.NoError(t, dev.Synchronize(ctx))
		free2, _, err := dev.MemInfo(ctx)
		require.NoError(t, err)
		require.GreaterOrEqual(t, free2, free1+size-slack, "freeing gives it back (%d, then %d)", free1, free2)
	}
	t.Run("in process", func(t *testing.T) { testdev.Backends(t, check) })
	t.Run("isolated", func(t *testing.T) { isolatedBackends(t, check) })
}

// Each device reports its own memory: an allocation on one leaves another's free memory as
// it was.
func TestMemInfoPerDevice(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		devs := testdev.All(t, ctx, opts)
		size := uint64(128 << 20)
		if devs[0].Backend() == device.BackendCUDA {
			size = 2 << 30 // room for what other test processes allocate meanwhile
		}
		free0, _, err := devs[0].MemInfo(ctx)
		require.NoError(t, err)
		b, err := devs[1].MallocBytes(ctx, size)
		require.NoError(t, err)
		defer b.Close(ctx)
		free1, _, err := devs[1].MemInfo(ctx)
		require.NoError(t, err)
		require.Greater(t, free0, uint64(0))
		after0, _, err := devs[0].MemInfo(ctx)
		require.NoError(t, err)
		require.InDelta(t, float64(free0), float64(after0), float64(size/2), "device 0 does not see device 1's allocation (other processes may allocate a little meanwhile)")
		require.Less(t, free1, devs[1].Properties().TotalMemory)
	})
}
