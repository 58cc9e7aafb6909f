package sim

import (
	"unsafe"

	"github.com/gpuactor/gpuactor/cudaerr"
)

// HostGetFlags is the flags HostAlloc was given for the memory holding p. Registered memory,
// and memory that is not pinned, is cudaerr.InvalidValue.
func (d *device) HostGetFlags(p unsafe.Pointer) (uint32, error) {
	const op = "cudaHostGetFlags"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	h := &d.b.host
	h.mu.Lock()
	r := h.findLocked(uintptr(p))
	h.mu.Unlock()
	switch {
	case r == nil:
		return 0, d.fail(op, cudaerr.InvalidValue, "%p is not pinned host memory from cudaHostAlloc", p)
	case !r.allocated:
		return 0, d.fail(op, cudaerr.InvalidValue, "%p is registered host memory, not memory from cudaHostAlloc", p)
	}
	return r.flags, nil
}
