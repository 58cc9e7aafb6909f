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
		// A kernel may use the per-block default of dynamic shared memory until its limit is
		// raised: at that default, shared memory is what bounds the blocks, below the thread
		// bound; one byte more and no block can launch, so none fits.
		dyn := props.SharedMemPerBlock
		n, err := k.MaxActiveBlocksPerSM(ctx, 128, dyn)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, n, 1)
		assert.LessOrEqual(t, n, props.SharedMemPerSM/dyn)
		assert.Less(t, n, props.MaxThreadsPerSM/128)
		if dyn < props.SharedMemPerBlockOptin {
			n, err = k.MaxActiveBlocksPerSM(ctx, 128, dyn+1)
			require.NoError(t, err)
			assert.Zero(t, n, "above the kernel's unraised limit")
		}
	}
	t.Run("in-process", func(t *testing.T) { testdev.Backends(t, check) })
	t.Run("isolated", func(t *testing.T) { isolatedBackends(t, check) })
}
