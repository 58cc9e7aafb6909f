package sample

import (
	"fmt"
	"sync"

	"github.com/gpuactor/gpuactor/cuda"
)

// HostViews maps the device addresses of mapped host memory to that memory, for simulated
// kernels: the simulator's kernels see device memory through their KernelCall, and mapped
// host arrays (zero-copy memory) through a HostViews the program fills as it maps them.
type HostViews struct {
	mu    sync.Mutex
	views map[cuda.DevicePtr][]float32
}

// Add records that device address p reaches the host floats xs.
func (h *HostViews) Add(p cuda.DevicePtr, xs []float32) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.views == nil {
		h.views = map[cuda.DevicePtr][]float32{}
	}
	h.views[p] = xs
}

// Floats is n floats at the address in argument i of a simulated launch: device memory, or
// mapped host memory added to h. Any other address panics, as a bad address faults a kernel.
func (h *HostViews) Floats(c *cuda.KernelCall, i, n int) []float32 {
	p := c.Ptr(i)
	if _, err := c.Mem.Bytes(p, uint64(4*n)); err == nil {
		return cuda.SimSlice[float32](c, i, n)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for base, xs := range h.views {
		if p >= base && p < base+cuda.DevicePtr(4*len(xs)) {
			if off := int(p-base) / 4; off+n <= len(xs) {
				return xs[off : off+n]
			}
		}
	}
	panic(fmt.Sprintf("sim kernel: argument %d: %#x is neither device memory nor a mapped host array", i, uintptr(p)))
}
