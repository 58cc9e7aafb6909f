package core

import (
	"errors"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// RetryTrimmed runs alloc, an allocation of device memory outside the stream-ordered pools,
// and when the device is out of memory trims the pools and runs it once more. Memory freed
// into a pool stays in it, beyond the pool's release threshold, until the next
// synchronization; gpuactor waits for the GPU through events rather than synchronizing, so
// without the trim a freed stream-ordered allocation could keep a cudaMalloc from the memory
// it left. Actor thread only.
func RetryTrimmed[T any](rt backend.Device, alloc func() (T, error)) (T, error) {
	v, err := alloc()
	if err == nil || !errors.Is(err, cudaerr.MemoryAllocation) {
		return v, err
	}
	if TrimPools(rt) {
		return alloc()
	}
	return v, err
}

// TrimPools returns the unused memory of the device's default and current pools down to
// their release thresholds, and reports whether it asked any. Actor thread only.
//
// It synchronizes the device first, holding the actor until every stream has drained: the
// runtime hands a pool the memory of a stream-ordered free only once a synchronization has
// seen the free complete, and trims nothing before. That is the one wait on the actor thread
// gpuactor makes for a caller, and only once an allocation has already run out of memory.
func TrimPools(rt backend.Device) bool {
	_ = rt.Synchronize() // an error here is the device's, and the retry reports it
	trimmed := false
	def, err := rt.DefaultMemPool()
	if err != nil {
		return false
	}
	pools := []backend.MemPool{def}
	if cur, err := rt.CurrentMemPool(); err == nil && cur != def {
		pools = append(pools, cur)
	}
	for _, p := range pools {
		keep, err := rt.MemPoolGetAttribute(p, backend.PoolReleaseThreshold)
		if err != nil {
			continue
		}
		if rt.MemPoolTrimTo(p, keep) == nil {
			trimmed = true
		}
	}
	return trimmed
}
