package sample

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/gpuactor/gpuactor/cuda"
)

// HostViews maps the device addresses of mapped host memory to that memory, for simulated
// kernels: the simulator's kernels see device memory through their KernelCall, and mapped
// host arrays (zero-copy memory, a pinned flag) through a HostViews the program fills as it
// maps them.
type HostViews[T any] struct {
	mu    sync.Mutex
	views map[cuda.DevicePtr][]T
}

// Add records that device address p reaches the host values xs.
func (h *HostViews[T]) Add(p cuda.DevicePtr, xs []T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.views == nil {
		h.views = map[cuda.DevicePtr][]T{}
	}
	h.views[p] = xs
}

// Remove forgets device address p: its host memory is about to be freed.
func (h *HostViews[T]) Remove(p cuda.DevicePtr) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.views, p)
}

// Slice is n values at the address in argument i of a simulated launch: device memory, or
// mapped host memory added to h. Any other address panics, as a bad address faults a kernel.
func (h *HostViews[T]) Slice(c *cuda.KernelCall, i, n int) []T {
	p := c.Ptr(i)
	size := int(unsafe.Sizeof(*new(T)))
	if _, err := c.Mem.Bytes(p, uint64(size*n)); err == nil {
		return cuda.SimSlice[T](c, i, n)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for base, xs := range h.views {
		if p >= base && p < base+cuda.DevicePtr(size*len(xs)) {
			if off := int(p-base) / size; off+n <= len(xs) {
				return xs[off : off+n]
			}
		}
	}
	panic(fmt.Sprintf("sim kernel: argument %d: %#x is neither device memory nor a mapped host array", i, uintptr(p)))
}
