//go:build linux

package device_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
)

// An empty kernel uses next to no registers and no shared memory, so from 128 threads a block
// on every GPU since Volta (and on the simulator) the multiprocessor's thread count is what
// bounds how many of its blocks fit: the answer follows from the device's properties. The
// cuda subtest is the check of the binding against the real occupancy calculator.
func TestOccupancyOfAnEmptyKernelIsBoundByThreads(t *testing.T) {
	check := func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		k, err := saxpyModule(t, dev).Kernel(ctx, "empty")
		require.NoError(t, err)
		props := dev.Properties()
		for _, block := range []int{128, 256, 1024} {
			n, err := k.MaxActiveBlocksPerSM(ctx, block, 0)
			require.NoError(t, err, "block %d", block)
			assert.Equal(t, props.MaxThreadsPerSM/block, n, "block %d", block)
		}
		// Shared memory beyond what the multiprocessor has for two blocks leaves room for one.
		n, err := k.MaxActiveBlocksPerSM(ctx, 128, props.SharedMemPerSM/2+1024)
		require.NoError(t, err)
		if props.SharedMemPerSM/2+1024 <= props.SharedMemPerBlockOptin {
			assert.Equal(t, 1, n)
		}
	}
	t.Run("in-process", func(t *testing.T) { testdev.Backends(t, check) })
	t.Run("isolated", func(t *testing.T) { isolatedBackends(t, check) })
}
