package sim

import (
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// OccupancyMaxActiveBlocksPerSM models the occupancy calculator from the device's attributes.
// A simulated kernel is Go code that uses no registers and no static shared memory, so a block
// is bounded by three limits only: the multiprocessor's threads (a block takes whole warps),
// its shared memory (each block's dynamic shared memory plus what the driver reserves per
// block), and its blocks. A block that cannot launch (more threads than a block may have, more
// dynamic shared memory than the kernel's limit, cudaFuncAttributeMaxDynamicSharedMemorySize)
// fits 0 times, as the runtime answers. The flags (cudaOccupancyDisableCachingOverride) change
// nothing: the simulator has no cache to override.
func (d *device) OccupancyMaxActiveBlocksPerSM(kh backend.Kernel, blockSize int, dynamicShared uint64, flags uint32) (int, error) {
	const op = "cudaOccupancyMaxActiveBlocksPerMultiprocessor"
	k, err := d.liveKernel(op, kh)
	if err != nil {
		return 0, err
	}
	if blockSize <= 0 {
		return 0, d.fail(op, cudaerr.InvalidValue, "block size %d: a block has at least one thread", blockSize)
	}
	if flags > backend.OccupancyDisableCachingOverride {
		return 0, d.fail(op, cudaerr.InvalidValue, "occupancy flags %#x: only cudaOccupancyDisableCachingOverride (1) is defined", flags)
	}
	return d.maxActiveBlocks(d.kernelAttrsOf(k), blockSize, dynamicShared), nil
}

// maxActiveBlocks is the occupancy model: blocks of blockSize threads and dynamicShared bytes
// one multiprocessor holds.
func (d *device) maxActiveBlocks(ka kernelAttrs, blockSize int, dynamicShared uint64) int {
	a := d.attrs
	if blockSize > a[backend.AttrMaxThreadsPerBlock] || dynamicShared > uint64(ka.maxDynamicShared) {
		return 0
	}
	warp := a[backend.AttrWarpSize]
	threads := (blockSize + warp - 1) / warp * warp
	n := min(a[backend.AttrMaxBlocksPerMultiprocessor], a[backend.AttrMaxThreadsPerMultiProcessor]/threads)
	if dynamicShared > 0 {
		perBlock := dynamicShared + uint64(a[backend.AttrReservedSharedMemoryPerBlock])
		n = min(n, int(uint64(a[backend.AttrMaxSharedMemoryPerSM])/perBlock))
	}
	return n
}

// OccupancyAvailableDynamicSMemPerBlock models the dynamic shared memory each of numBlocks
// blocks of blockSize threads may use on one multiprocessor: its shared memory split evenly,
// less what the driver reserves per block, and at most the device's opt-in limit; 0 when that
// many blocks cannot be resident for their threads or the block limit.
func (d *device) OccupancyAvailableDynamicSMemPerBlock(kh backend.Kernel, numBlocks, blockSize int) (uint64, error) {
	const op = "cudaOccupancyAvailableDynamicSMemPerBlock"
	if _, err := d.liveKernel(op, kh); err != nil {
		return 0, err
	}
	a := d.attrs
	if blockSize <= 0 || numBlocks <= 0 {
		return 0, d.fail(op, cudaerr.InvalidValue, "%d blocks of %d threads: both must be at least 1", numBlocks, blockSize)
	}
	warp := a[backend.AttrWarpSize]
	threads := (blockSize + warp - 1) / warp * warp
	if blockSize > a[backend.AttrMaxThreadsPerBlock] || numBlocks > a[backend.AttrMaxBlocksPerMultiprocessor] ||
		numBlocks*threads > a[backend.AttrMaxThreadsPerMultiProcessor] {
		return 0, nil
	}
	share := a[backend.AttrMaxSharedMemoryPerSM]/numBlocks - a[backend.AttrReservedSharedMemoryPerBlock]
	return uint64(max(0, min(share, a[backend.AttrMaxSharedMemoryPerBlockOptin]))), nil
}

// OccupancyMaxPotentialClusterSize models the largest cluster the device schedules: the
// kernel's portable or non-portable limit, bounded by the blocks the whole device holds; 0 on
// a device without clusters.
func (d *device) OccupancyMaxPotentialClusterSize(kh backend.Kernel, grid, block backend.Dim3, sharedMem uint32, a backend.LaunchAttrs) (int, error) {
	const op = "cudaOccupancyMaxPotentialClusterSize"
	k, err := d.liveKernel(op, kh)
	if err != nil {
		return 0, err
	}
	if why := d.checkLaunch(grid, block, sharedMem); why != "" {
		return 0, d.fail(op, cudaerr.InvalidConfiguration, "kernel %q: %s", k.name, why)
	}
	if d.attrs[backend.AttrComputeCapabilityMajor] < 9 {
		return 0, nil
	}
	ka := d.kernelAttrsOf(k)
	resident := d.maxActiveBlocks(ka, int(block.Count()), uint64(sharedMem)) * d.attrs[backend.AttrMultiProcessorCount]
	return min(clusterLimit(ka), resident), nil
}

// OccupancyMaxActiveClusters models how many clusters of a.Cluster blocks are resident at
// once: the device's resident blocks divided into clusters.
func (d *device) OccupancyMaxActiveClusters(kh backend.Kernel, grid, block backend.Dim3, sharedMem uint32, a backend.LaunchAttrs) (int, error) {
	const op = "cudaOccupancyMaxActiveClusters"
	k, err := d.liveKernel(op, kh)
	if err != nil {
		return 0, err
	}
	if why := d.checkLaunch(grid, block, sharedMem); why != "" {
		return 0, d.fail(op, cudaerr.InvalidConfiguration, "kernel %q: %s", k.name, why)
	}
	ka := d.kernelAttrsOf(k)
	c := a.Cluster
	if c == (backend.Dim3{}) {
		c = ka.requiredCluster
	}
	if c == (backend.Dim3{}) {
		return 0, d.fail(op, cudaerr.InvalidClusterSize, "kernel %q: no cluster shape given (cudaLaunchAttributeClusterDimension) or required by the kernel", k.name)
	}
	if err := d.checkCluster(op, k, ka, grid, c); err != nil {
		return 0, err
	}
	resident := d.maxActiveBlocks(ka, int(block.Count()), uint64(sharedMem)) * d.attrs[backend.AttrMultiProcessorCount]
	return resident / int(c.Count()), nil
}
