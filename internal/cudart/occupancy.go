package cudart

import (
	"math"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// OccupancyMaxActiveBlocksPerSM is how many blocks of k, of blockSize threads and
// dynamicShared bytes of dynamic shared memory each, one multiprocessor of the current device
// holds at once. A kernel with a CUfunction (every DriverAPI kernel, and a LibraryAPI one
// when the driver gave its function) asks cuOccupancyMaxActiveBlocksPerMultiprocessor(int*,
// CUfunction, int, size_t); a cudaKernel_t without one asks the runtime's
// cudaOccupancyMaxActiveBlocksPerMultiprocessor(int*, const void*, int, size_t), which takes
// a cudaKernel_t in place of the function.
func (r *Runtime) OccupancyMaxActiveBlocksPerSM(k Kernel, blockSize int, dynamicShared uint64) (int, error) {
	if blockSize <= 0 || blockSize > math.MaxInt32 {
		return 0, r.newError(runtimeSymNames[fnOccupancyMaxActiveBlocksPerMultiprocessor], codeInvalidValue)
	}
	var n int32
	var err error
	if k.Func != 0 {
		err = r.driverCall(drvOccupancyMaxActiveBlocksPerMultiprocessor, uintptr(unsafe.Pointer(&n)), k.Func,
			uintptr(uint32(blockSize)), uintptr(dynamicShared))
	} else {
		err = r.call(fnOccupancyMaxActiveBlocksPerMultiprocessor, uintptr(unsafe.Pointer(&n)), k.Handle,
			uintptr(uint32(blockSize)), uintptr(dynamicShared))
	}
	if err != nil {
		return 0, err
	}
	return int(n), nil
}

func (d *device) OccupancyMaxActiveBlocksPerSM(k backend.Kernel, blockSize int, dynamicShared uint64) (int, error) {
	kern, err := d.kernel("cudaOccupancyMaxActiveBlocksPerMultiprocessor", k)
	if err != nil {
		return 0, err
	}
	return d.rt.OccupancyMaxActiveBlocksPerSM(kern, blockSize, dynamicShared)
}
