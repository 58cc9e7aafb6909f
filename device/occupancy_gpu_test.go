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
		// At the per-block default of dynamic shared memory, shared memory is what bounds the
		// blocks, below the thread bound. Above it the query raises the kernel's limit as a
		// launch would, and shared memory still bounds the answer, which is not 0.
		dyn := props.SharedMemPerBlock
		n, err := k.MaxActiveBlocksPerSM(ctx, 128, dyn)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, n, 1)
		assert.LessOrEqual(t, n, props.SharedMemPerSM/dyn)
		assert.Less(t, n, props.MaxThreadsPerSM/128)
		if dyn < props.SharedMemPerBlockOptin {
			big := props.SharedMemPerBlockOptin
			n, err = k.MaxActiveBlocksPerSM(ctx, 128, big)
			require.NoError(t, err)
			assert.Equal(t, 1, n, "one block of the opt-in limit fits a multiprocessor, two do not")
			attrs, err := k.Attributes(ctx)
			require.NoError(t, err)
			assert.Equal(t, big, attrs.MaxDynamicSharedSizeBytes, "the query raised the kernel's limit")
		}
	}
	t.Run("in-process", func(t *testing.T) { testdev.Backends(t, check) })
	t.Run("isolated", func(t *testing.T) { isolatedBackends(t, check) })
}
