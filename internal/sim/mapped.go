package sim

import (
	"fmt"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// Mapped host memory. Under unified addressing every HostAlloc allocation is mapped into the
// devices' address space at its host address, whatever its flags; registered memory is
// mapped only when registered with HostRegisterMapped. A simulated kernel given such an
// address (HostDevicePointer's answer) reads and writes the host bytes themselves, so the
// host sees a kernel's writes once the stream is synchronized, as on a GPU (zero copy).
// Device addresses start at addrBase, above every host address, so the two never collide.

// mappedLocked reports whether r is mapped into the devices' address space.
func (r *hostRange) mappedLocked() bool {
	return r.allocated || r.flags&backend.HostRegisterMapped != 0
}

// bytes is [off, off+n) of the range's memory.
func (r *hostRange) bytes(off, n uint64) []byte {
	if r.allocated {
		return r.buf[off : off+n : off+n]
	}
	return unsafe.Slice((*byte)(unsafe.Add(r.keep, off)), n)
}

// mappedView resolves [p, p+n) inside mapped host memory for a kernel. ok is false when p is
// not inside any pinned range (the caller then looks in device memory); a pinned range that
// is not mapped, or an access running past its end, is a detail saying why.
func (h *hostMemory) mappedView(p uintptr, n uint64) (b []byte, detail string, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.findLocked(p)
	if r == nil {
		return nil, "", false
	}
	if !r.mappedLocked() {
		return nil, fmt.Sprintf("%#x is host memory registered without HostRegisterMapped: devices cannot address it", p), true
	}
	off := uint64(p - r.base)
	if n > r.size-off {
		return nil, fmt.Sprintf("%d bytes at %#x run %d bytes past the end of the %d-byte mapped host range at %#x",
			n, p, n-(r.size-off), r.size, r.base), true
	}
	return r.bytes(off, n), "", true
}

// mappedExtent is how many bytes of mapped host memory lie at and after p; ok as mappedView.
func (h *hostMemory) mappedExtent(p uintptr) (n uint64, detail string, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.findLocked(p)
	if r == nil {
		return 0, "", false
	}
	if !r.mappedLocked() {
		return 0, fmt.Sprintf("%#x is host memory registered without HostRegisterMapped: devices cannot address it", p), true
	}
	return r.size - uint64(p-r.base), "", true
}
