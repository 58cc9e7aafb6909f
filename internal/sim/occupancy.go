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
// dynamic shared memory than a kernel may use without raising its limit, the per-block default)
// fits 0 times, as the runtime answers.
func (d *device) OccupancyMaxActiveBlocksPerSM(kh backend.Kernel, blockSize int, dynamicShared uint64) (int, error) {
	const op = "cudaOccupancyMaxActiveBlocksPerMultiprocessor"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	d.b.mu.RLock()
	k := d.b.kernels[kh]
	d.b.mu.RUnlock()
	if k == nil {
		return 0, d.fail(op, cudaerr.InvalidDeviceFunction, "kernel %#x is not a live kernel (its module was unloaded, or it was never looked up)", uintptr(kh))
	}
	if blockSize <= 0 {
		return 0, d.fail(op, cudaerr.InvalidValue, "block size %d: a block has at least one thread", blockSize)
	}
	a := d.attrs
	if blockSize > a[backend.AttrMaxThreadsPerBlock] || dynamicShared > uint64(a[backend.AttrMaxSharedMemoryPerBlock]) {
		return 0, nil
	}
	warp := a[backend.AttrWarpSize]
	threads := (blockSize + warp - 1) / warp * warp
	n := min(a[backend.AttrMaxBlocksPerMultiprocessor], a[backend.AttrMaxThreadsPerMultiProcessor]/threads)
	if dynamicShared > 0 {
		perBlock := dynamicShared + uint64(a[backend.AttrReservedSharedMemoryPerBlock])
		n = min(n, int(uint64(a[backend.AttrMaxSharedMemoryPerSM])/perBlock))
	}
	return n, nil
}
