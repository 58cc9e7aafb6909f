package cudart

import (
	"math"
	"runtime"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// OccupancyMaxActiveBlocksPerSM is how many blocks of k, of blockSize threads and
// dynamicShared bytes of dynamic shared memory each, one multiprocessor of the current device
// holds at once. A kernel with a CUfunction (every DriverAPI kernel, and a LibraryAPI one
// when the driver gave its function) asks cuOccupancyMaxActiveBlocksPerMultiprocessor(int*,
// CUfunction, int, size_t), or its WithFlags form (…, unsigned flags) when flags are given; a
// cudaKernel_t without one asks the runtime's cudaOccupancyMaxActiveBlocksPerMultiprocessor
// (WithFlags), which takes a cudaKernel_t in place of the function.
func (r *Runtime) OccupancyMaxActiveBlocksPerSM(k Kernel, blockSize int, dynamicShared uint64, flags uint32) (int, error) {
	if blockSize <= 0 || blockSize > math.MaxInt32 {
		return 0, r.newError(runtimeSymNames[fnOccupancyMaxActiveBlocksPerMultiprocessor], codeInvalidValue)
	}
	var n int32
	var err error
	switch {
	case k.Func != 0 && flags == 0:
		err = r.driverCall(drvOccupancyMaxActiveBlocksPerMultiprocessor, uintptr(unsafe.Pointer(&n)), k.Func,
			uintptr(uint32(blockSize)), uintptr(dynamicShared))
	case k.Func != 0:
		err = r.driverCall(drvOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, uintptr(unsafe.Pointer(&n)), k.Func,
			uintptr(uint32(blockSize)), uintptr(dynamicShared), uintptr(flags))
	case flags == 0:
		err = r.call(fnOccupancyMaxActiveBlocksPerMultiprocessor, uintptr(unsafe.Pointer(&n)), k.Handle,
			uintptr(uint32(blockSize)), uintptr(dynamicShared))
	default:
		err = r.call(fnOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, uintptr(unsafe.Pointer(&n)), k.Handle,
			uintptr(uint32(blockSize)), uintptr(dynamicShared), uintptr(flags))
	}
	if err != nil {
		return 0, err
	}
	return int(n), nil
}

// OccupancyAvailableDynamicSMemPerBlock is the dynamic shared memory a block of k may use with
// numBlocks blocks of blockSize threads on one multiprocessor:
// cuOccupancyAvailableDynamicSMemPerBlock(size_t*, CUfunction, int, int) or
// cudaOccupancyAvailableDynamicSMemPerBlock(size_t*, const void*, int, int).
func (r *Runtime) OccupancyAvailableDynamicSMemPerBlock(k Kernel, numBlocks, blockSize int) (uint64, error) {
	if blockSize <= 0 || blockSize > math.MaxInt32 || numBlocks <= 0 || numBlocks > math.MaxInt32 {
		return 0, r.newError(runtimeSymNames[fnOccupancyAvailableDynamicSMemPerBlock], codeInvalidValue)
	}
	var n uint64
	var err error
	if k.Func != 0 {
		err = r.driverCall(drvOccupancyAvailableDynamicSMemPerBlock, uintptr(unsafe.Pointer(&n)), k.Func,
			uintptr(uint32(numBlocks)), uintptr(uint32(blockSize)))
	} else {
		err = r.call(fnOccupancyAvailableDynamicSMemPerBlock, uintptr(unsafe.Pointer(&n)), k.Handle,
			uintptr(uint32(numBlocks)), uintptr(uint32(blockSize)))
	}
	return n, err
}

// clusterQuery asks cuOccupancyMaxPotentialClusterSize / cuOccupancyMaxActiveClusters (int*,
// CUfunction, const CUlaunchConfig*) or their runtime forms (int*, const void*, const
// cudaLaunchConfig_t*) with the launch's config and attributes.
func (r *Runtime) clusterQuery(drv, fn int, k Kernel, grid, block Dim3, sharedMem uint32, a backend.LaunchAttrs) (int, error) {
	f := getLaunchFrame()
	defer putLaunchFrame(f)
	f.set(grid, block, sharedMem, 0, a)
	var n int32
	var err error
	if k.Func != 0 {
		err = r.driverCall(drv, uintptr(unsafe.Pointer(&n)), k.Func, uintptr(unsafe.Pointer(&f.drv)))
	} else {
		err = r.call(fn, uintptr(unsafe.Pointer(&n)), k.Handle, uintptr(unsafe.Pointer(&f.rt)))
	}
	runtime.KeepAlive(f)
	return int(n), err
}

// OccupancyMaxPotentialClusterSize is the largest cluster of k's blocks the device schedules
// for the launch (cudaOccupancyMaxPotentialClusterSize); a.Cluster must be zero.
func (r *Runtime) OccupancyMaxPotentialClusterSize(k Kernel, grid, block Dim3, sharedMem uint32, a backend.LaunchAttrs) (int, error) {
	a.Cluster = Dim3{}
	return r.clusterQuery(drvOccupancyMaxPotentialClusterSize, fnOccupancyMaxPotentialClusterSize, k, grid, block, sharedMem, a)
}

// OccupancyMaxActiveClusters is how many clusters of a.Cluster blocks of k can be resident
// at once (cudaOccupancyMaxActiveClusters).
func (r *Runtime) OccupancyMaxActiveClusters(k Kernel, grid, block Dim3, sharedMem uint32, a backend.LaunchAttrs) (int, error) {
	return r.clusterQuery(drvOccupancyMaxActiveClusters, fnOccupancyMaxActiveClusters, k, grid, block, sharedMem, a)
}

func (d *device) OccupancyMaxActiveBlocksPerSM(k backend.Kernel, blockSize int, dynamicShared uint64, flags uint32) (int, error) {
	kern, err := d.kernel("cudaOccupancyMaxActiveBlocksPerMultiprocessor", k)
	if err != nil {
		return 0, err
	}
	return d.rt.OccupancyMaxActiveBlocksPerSM(kern, blockSize, dynamicShared, flags)
}

func (d *device) OccupancyAvailableDynamicSMemPerBlock(k backend.Kernel, numBlocks, blockSize int) (uint64, error) {
	kern, err := d.kernel("cudaOccupancyAvailableDynamicSMemPerBlock", k)
	if err != nil {
		return 0, err
	}
	return d.rt.OccupancyAvailableDynamicSMemPerBlock(kern, numBlocks, blockSize)
}

func (d *device) OccupancyMaxPotentialClusterSize(k backend.Kernel, grid, block backend.Dim3, sharedMem uint32, a backend.LaunchAttrs) (int, error) {
	kern, err := d.kernel("cudaOccupancyMaxPotentialClusterSize", k)
	if err != nil {
		return 0, err
	}
	return d.rt.OccupancyMaxPotentialClusterSize(kern, grid, block, sharedMem, a)
}

func (d *device) OccupancyMaxActiveClusters(k backend.Kernel, grid, block backend.Dim3, sharedMem uint32, a backend.LaunchAttrs) (int, error) {
	kern, err := d.kernel("cudaOccupancyMaxActiveClusters", k)
	if err != nil {
		return 0, err
	}
	return d.rt.OccupancyMaxActiveClusters(kern, grid, block, sharedMem, a)
}
