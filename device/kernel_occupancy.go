package device

import (
	"context"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// OccupancyOption changes how an occupancy query counts.
type OccupancyOption func(*occupancyConfig)

type occupancyConfig struct{ flags uint32 }

// DisableCachingOverride answers as if global loads were not cached in L1 where the kernel's
// cache configuration would have them cached (cudaOccupancyDisableCachingOverride).
func DisableCachingOverride() OccupancyOption {
	return func(c *occupancyConfig) { c.flags |= backend.OccupancyDisableCachingOverride }
}

func occupancyFlags(opts []OccupancyOption) uint32 {
	var c occupancyConfig
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c.flags
}

// AvailableDynamicSharedMemory is the most dynamic shared memory each block of the kernel may
// use when numBlocks blocks of blockSize threads share a multiprocessor
// (cudaOccupancyAvailableDynamicSMemPerBlock); 0 when that many blocks cannot be resident.
// It returns once the device answered.
func (k *Kernel) AvailableDynamicSharedMemory(ctx context.Context, numBlocks, blockSize int) (int, error) {
	return k.core().AvailableDynamicSharedMemory(ctx, numBlocks, blockSize)
}

// MaxPotentialClusterSize is the largest cluster of the kernel's blocks the device can
// schedule for a launch with cfg's grid, block, shared memory and attributes
// (cudaOccupancyMaxPotentialClusterSize); cfg.Cluster is ignored. 0 on a device without
// clusters. It returns once the device answered.
func (k *Kernel) MaxPotentialClusterSize(ctx context.Context, cfg cuda.LaunchConfig) (int, error) {
	return k.core().MaxPotentialClusterSize(ctx, cfg)
}

// MaxActiveClusters is how many clusters of cfg.Cluster blocks of the kernel can be resident
// on the device at once for a launch with cfg (cudaOccupancyMaxActiveClusters). It returns
// once the device answered; a config without a Cluster shape is an ErrInvalidArgument error.
func (k *Kernel) MaxActiveClusters(ctx context.Context, cfg cuda.LaunchConfig) (int, error) {
	return k.core().MaxActiveClusters(ctx, cfg)
}

// MaxPotentialBlockSize is the block size that gives the kernel the most resident threads
// per multiprocessor, and the smallest grid that fills the device with such blocks: the
// runtime's cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags, a C++ template written
// here in Go. It tries every block size from the limit down in steps of a warp, asking the
// occupancy calculator for each; dynamicShared gives the dynamic shared memory a block of a
// given size uses (nil: none). blockSizeLimit caps the block size (0: the kernel's and the
// device's limits). It returns once the device answered every query.
func (k *Kernel) MaxPotentialBlockSize(ctx context.Context, dynamicShared func(blockSize int) int, blockSizeLimit int, opts ...OccupancyOption) (minGridSize, blockSize int, err error) {
	if k == nil {
		return 0, 0, core.Invalid("MaxPotentialBlockSize of a nil kernel")
	}
	if blockSizeLimit < 0 {
		return 0, 0, core.Invalid("MaxPotentialBlockSize of kernel %s: block size limit %d is negative", k.Name(), blockSizeLimit)
	}
	attrs, err := k.Attributes(ctx)
	if err != nil {
		return 0, 0, err
	}
	props := (*Device)(k.core().Module().Device()).Properties()
	flags := occupancyFlags(opts)
	occupancyLimit, granularity := props.MaxThreadsPerSM, props.WarpSize
	if blockSizeLimit == 0 {
		blockSizeLimit = props.MaxThreadsPerBlock
	}
	blockSizeLimit = min(blockSizeLimit, props.MaxThreadsPerBlock, attrs.MaxThreadsPerBlock)
	aligned := (blockSizeLimit + granularity - 1) / granularity * granularity

	var best, bestBlocks, bestThreads int
	for try := aligned; try > 0; try -= granularity {
		size := min(try, blockSizeLimit) // the first, aligned up, may pass the limit
		smem := 0
		if dynamicShared != nil {
			smem = dynamicShared(size)
		}
		if smem < 0 {
			return 0, 0, core.Invalid("MaxPotentialBlockSize of kernel %s: %d bytes of dynamic shared memory for blocks of %d threads", k.Name(), smem, size)
		}
		if smem > props.SharedMemPerBlockOptin {
			continue // such a block cannot launch: no occupancy
		}
		blocks, err := k.core().MaxActiveBlocksPerSM(ctx, size, smem, flags)
		if err != nil {
			return 0, 0, err
		}
		if threads := size * blocks; threads > bestThreads {
			best, bestBlocks, bestThreads = size, blocks, threads
		}
		if bestThreads == occupancyLimit {
			break
		}
	}
	return bestBlocks * props.MultiProcessors, best, nil
}

// MaxPotentialBlockSizeFixed is MaxPotentialBlockSize for a kernel whose blocks use the same
// dynamic shared memory whatever their size (cudaOccupancyMaxPotentialBlockSize).
func (k *Kernel) MaxPotentialBlockSizeFixed(ctx context.Context, dynamicSharedBytes, blockSizeLimit int, opts ...OccupancyOption) (minGridSize, blockSize int, err error) {
	return k.MaxPotentialBlockSize(ctx, func(int) int { return dynamicSharedBytes }, blockSizeLimit, opts...)
}
