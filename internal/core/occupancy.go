package core

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// MaxActiveBlocksPerSM is how many blocks of k, of blockSize threads and dynamicSharedBytes of
// dynamic shared memory each, one multiprocessor of k's device holds at once, as the runtime's
// occupancy calculator says. It returns once the device answered. A block size outside 1 to
// the device's threads per block, or shared memory outside 0 to its per-block limit, is an
// ErrInvalidArgument error that never reaches the device.
func (k *Kernel) MaxActiveBlocksPerSM(ctx context.Context, blockSize, dynamicSharedBytes int) (int, error) {
	if k == nil {
		return 0, Invalid("MaxActiveBlocksPerSM of a nil kernel")
	}
	m := k.mod
	lim := m.dev.Limits()
	if blockSize < 1 || blockSize > lim.MaxThreadsPerBlock {
		return 0, Invalid("MaxActiveBlocksPerSM of kernel %s: block size %d is outside 1 to the device's %d threads per block", k.name, blockSize, lim.MaxThreadsPerBlock)
	}
	if dynamicSharedBytes < 0 || dynamicSharedBytes > lim.MaxSharedMem {
		return 0, Invalid("MaxActiveBlocksPerSM of kernel %s: %d bytes of dynamic shared memory are outside 0 to the device's %d per block", k.name, dynamicSharedBytes, lim.MaxSharedMem)
	}
	return Run(ctx, m.dev, func(rt backend.Device, _ *Tracker) (int, error) {
		if m.closed.Load() {
			return 0, Closed("module %s was closed", m.name)
		}
		n, err := rt.OccupancyMaxActiveBlocksPerSM(k.h, blockSize, uint64(dynamicSharedBytes))
		if err != nil {
			return 0, fmt.Errorf("gpuactor: occupancy of kernel %s: %w", k.name, err)
		}
		return n, nil
	}).Await(ctx)
}
