package core

import (
	"context"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// MaxActiveBlocksPerSM is how many blocks of k, of blockSize threads and dynamicSharedBytes of
// dynamic shared memory each, one multiprocessor of k's device holds at once, as the runtime's
// occupancy calculator says (flags: backend.Occupancy*). It returns once the device answered.
// Above the device's default per-block shared memory it raises k's limit first, as a launch
// asking that much would. A block size outside 1 to the device's threads per block, or shared
// memory outside 0 to its opt-in limit, is an ErrInvalidArgument error that never reaches the
// device.
func (k *Kernel) MaxActiveBlocksPerSM(ctx context.Context, blockSize, dynamicSharedBytes int, flags uint32) (int, error) {
	if k == nil {
		return 0, Invalid("MaxActiveBlocksPerSM of a nil kernel")
	}
	if err := k.checkBlock("MaxActiveBlocksPerSM", blockSize, dynamicSharedBytes); err != nil {
		return 0, err
	}
	if flags > backend.OccupancyDisableCachingOverride {
		return 0, Invalid("MaxActiveBlocksPerSM of kernel %s: occupancy flags %#x, only OccupancyDisableCachingOverride (1) is defined", k.name, flags)
	}
	return onKernel(ctx, k, "occupancy", func(rt backend.Device) (int, error) {
		// Answer as a launch would run: with the limit a launch asking this much sets.
		if err := k.raiseShared(rt, &cuda.LaunchConfig{SharedMem: uint32(dynamicSharedBytes)}); err != nil {
			return 0, err
		}
		return rt.OccupancyMaxActiveBlocksPerSM(k.h, blockSize, uint64(dynamicSharedBytes), flags)
	})
}

// checkBlock checks an occupancy query's block size and dynamic shared memory.
func (k *Kernel) checkBlock(op string, blockSize, dynamicSharedBytes int) error {
	lim := k.mod.dev.Limits()
	if blockSize < 1 || blockSize > lim.MaxThreadsPerBlock {
		return Invalid("%s of kernel %s: block size %d is outside 1 to the device's %d threads per block", op, k.name, blockSize, lim.MaxThreadsPerBlock)
	}
	if dynamicSharedBytes < 0 || dynamicSharedBytes > lim.MaxSharedMem {
		return Invalid("%s of kernel %s: %d bytes of dynamic shared memory are outside 0 to the device's %d per block", op, k.name, dynamicSharedBytes, lim.MaxSharedMem)
	}
	return nil
}

// AvailableDynamicSharedMemory is the most dynamic shared memory each block of k may use when
// numBlocks blocks of blockSize threads share a multiprocessor
// (cudaOccupancyAvailableDynamicSMemPerBlock); 0 when that many blocks cannot be resident.
func (k *Kernel) AvailableDynamicSharedMemory(ctx context.Context, numBlocks, blockSize int) (int, error) {
	if k == nil {
		return 0, Invalid("AvailableDynamicSharedMemory of a nil kernel")
	}
	if err := k.checkBlock("AvailableDynamicSharedMemory", blockSize, 0); err != nil {
		return 0, err
	}
	if numBlocks < 1 {
		return 0, Invalid("AvailableDynamicSharedMemory of kernel %s: %d blocks per multiprocessor, at least 1 is needed", k.name, numBlocks)
	}
	return onKernel(ctx, k, "available dynamic shared memory", func(rt backend.Device) (int, error) {
		n, err := rt.OccupancyAvailableDynamicSMemPerBlock(k.h, numBlocks, blockSize)
		return int(n), err
	})
}

// MaxPotentialClusterSize is the largest cluster of k's blocks the device can schedule for a
// launch with cfg (cudaOccupancyMaxPotentialClusterSize); cfg.Cluster is ignored.
func (k *Kernel) MaxPotentialClusterSize(ctx context.Context, cfg cuda.LaunchConfig) (int, error) {
	if k == nil {
		return 0, Invalid("MaxPotentialClusterSize of a nil kernel")
	}
	cfg.Cluster = cuda.Dim3{}
	if err := k.mod.dev.checkConfig(k, cfg); err != nil {
		return 0, err
	}
	return onKernel(ctx, k, "potential cluster size", func(rt backend.Device) (int, error) {
		if err := k.raiseShared(rt, &cfg); err != nil {
			return 0, err
		}
		return rt.OccupancyMaxPotentialClusterSize(k.h, cfg.Grid, cfg.Block, cfg.SharedMem, launchAttrs(&cfg))
	})
}

// MaxActiveClusters is how many clusters of cfg.Cluster blocks of k can be resident at once
// (cudaOccupancyMaxActiveClusters).
func (k *Kernel) MaxActiveClusters(ctx context.Context, cfg cuda.LaunchConfig) (int, error) {
	if k == nil {
		return 0, Invalid("MaxActiveClusters of a nil kernel")
	}
	if cfg.Cluster == (cuda.Dim3{}) {
		return 0, Invalid("MaxActiveClusters of kernel %s: the config has no Cluster shape", k.name)
	}
	if err := k.mod.dev.checkConfig(k, cfg); err != nil {
		return 0, err
	}
	return onKernel(ctx, k, "active clusters", func(rt backend.Device) (int, error) {
		if err := k.raiseShared(rt, &cfg); err != nil {
			return 0, err
		}
		return rt.OccupancyMaxActiveClusters(k.h, cfg.Grid, cfg.Block, cfg.SharedMem, launchAttrs(&cfg))
	})
}
