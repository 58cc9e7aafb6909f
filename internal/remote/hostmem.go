package remote

import (
	"fmt"
	"os"
	"unsafe"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Host memory an isolated device copies through is memory both processes map: HostAlloc makes
// a memfd, maps it in the parent, and has the worker map the same file and register it with
// its backend (cudaHostRegister), so it is pinned there. A copy names the worker's address of
// the same bytes, translated through a table of those regions, and the data never passes
// through the call itself. Any other host pointer (a Go slice, memory of another allocator)
// the worker cannot see: copies from it are refused.

// errNotShared is the error of a copy whose host memory is not HostAlloc's.
func errNotShared(op string, p unsafe.Pointer, n uint64) error {
	return &cudaerr.Error{Op: op, Code: cudaerr.NotSupported, Message: fmt.Sprintf(
		"not supported on an isolated device: %d bytes at %p are not inside memory from its HostAlloc; isolated devices copy only through gpuactor's host buffers", n, p)}
}

// HostAlloc allocates size bytes of host memory shared with the worker and pinned there
// (flags: HostAllocPortable and HostAllocMapped carry over to the worker's registration;
// write-combining does not). It completes once the worker mapped and registered it.
func (d *Device) HostAlloc(size uint64, flags uint32) (unsafe.Pointer, error) {
	const op = "cudaHostAlloc"
	if size == 0 {
		return nil, nil
	}
	if flags&^(backend.HostAllocPortable|backend.HostAllocMapped|backend.HostAllocWriteCombined) != 0 {
		return nil, &cudaerr.Error{Op: op, Code: cudaerr.InvalidValue, Message: fmt.Sprintf("unknown cudaHostAlloc flags %#x", flags)}
	}
	mem, f, err := newShared(size)
	if err != nil {
		return nil, &cudaerr.Error{Op: op, Code: cudaerr.MemoryAllocation, Message: fmt.Sprintf("%d bytes of host memory shared with the worker: %v", size, err)}
	}
	e := request(mHostAlloc)
	e.i64(int64(os.Getpid()))
	e.u64(uint64(f.Fd()))
	e.u64(size)
	e.u64(uint64(flags))
	r, err := d.do(e)
	_ = f.Close() // the worker has its own mapping now, or failed: the descriptor is done
	if err != nil {
		_ = unmapShared(mem)
		return nil, err
	}
	reg := &region{mem: mem, peer: r.u64(), flags: flags}
	d.b.host.add(reg)
	return reg.at(0), nil
}

// HostFree frees memory from HostAlloc, in the worker and then here. The parent's mapping
// goes even when the worker is gone.
func (d *Device) HostFree(p unsafe.Pointer) error {
	if p == nil {
		return nil
	}
	reg := d.b.host.remove(uintptr(p))
	if reg == nil {
		return &cudaerr.Error{Op: "cudaFreeHost", Code: cudaerr.InvalidValue,
			Message: fmt.Sprintf("%p is not the start of memory from this isolated device's HostAlloc", p)}
	}
	err := d.void(mHostFree, reg.peer)
	_ = unmapShared(reg.mem)
	return err
}

// HostGetFlags is the flags HostAlloc was given for the memory holding p, answered in the
// parent: the worker registered its mapping, which has no HostAlloc flags there.
func (d *Device) HostGetFlags(p unsafe.Pointer) (uint32, error) {
	reg, _, ok := d.b.host.find(uintptr(p), 0)
	if !ok {
		return 0, &cudaerr.Error{Op: "cudaHostGetFlags", Code: cudaerr.InvalidValue,
			Message: fmt.Sprintf("%p is not pinned host memory from cudaHostAlloc", p)}
	}
	return reg.flags, nil
}

// peerOf translates n bytes at p, in HostAlloc's memory, to the worker's address.
func (d *Device) peerOf(op string, p unsafe.Pointer, n uint64) (uint64, error) {
	reg, off, ok := d.b.host.find(uintptr(p), n)
	if !ok {
		return 0, errNotShared(op, p, n)
	}
	return reg.peer + off, nil
}

// CopyHtoD queues a copy from HostAlloc's memory to the device on s.
func (d *Device) CopyHtoD(dst backend.DevicePtr, src unsafe.Pointer, n uint64, s backend.Stream) error {
	at, err := d.peerOf("cudaMemcpyAsync", src, n)
	if err != nil {
		return err
	}
	return d.postVoid(mCopyHtoD, s, uint64(dst), at, n, uint64(s))
}

// CopyDtoH queues a copy from the device to HostAlloc's memory on s.
func (d *Device) CopyDtoH(dst unsafe.Pointer, src backend.DevicePtr, n uint64, s backend.Stream) error {
	at, err := d.peerOf("cudaMemcpyAsync", dst, n)
	if err != nil {
		return err
	}
	return d.postVoid(mCopyDtoH, s, at, uint64(src), n, uint64(s))
}

// HostDevicePointer is the device address of mapped memory from HostAlloc.
func (d *Device) HostDevicePointer(p unsafe.Pointer) (backend.DevicePtr, error) {
	at, err := d.peerOf("cudaHostGetDevicePointer", p, 0)
	if err != nil {
		return 0, err
	}
	v, err := d.val(mHostDevicePointer, at)
	return backend.DevicePtr(v), err
}

// GraphAddCopyHtoD adds a copy node from HostAlloc's memory.
func (d *Device) GraphAddCopyHtoD(g backend.Graph, deps []backend.GraphNode, dst backend.DevicePtr, src unsafe.Pointer, n uint64) (backend.GraphNode, error) {
	at, err := d.peerOf("cudaGraphAddMemcpyNode", src, n)
	if err != nil {
		return 0, err
	}
	e := request(mGraphAddCopyHtoD)
	e.u64(uint64(g))
	encListGraphNode(&e, deps)
	e.u64(uint64(dst))
	e.u64(at)
	e.u64(n)
	return d.addNode(e)
}

// GraphAddCopyDtoH adds a copy node to HostAlloc's memory.
func (d *Device) GraphAddCopyDtoH(g backend.Graph, deps []backend.GraphNode, dst unsafe.Pointer, src backend.DevicePtr, n uint64) (backend.GraphNode, error) {
	at, err := d.peerOf("cudaGraphAddMemcpyNode", dst, n)
	if err != nil {
		return 0, err
	}
	e := request(mGraphAddCopyDtoH)
	e.u64(uint64(g))
	encListGraphNode(&e, deps)
	e.u64(at)
	e.u64(uint64(src))
	e.u64(n)
	return d.addNode(e)
}

// addNode sends a request that answers a graph node.
func (d *Device) addNode(e enc) (backend.GraphNode, error) {
	r, err := d.do(e)
	if err != nil {
		return 0, err
	}
	return backend.GraphNode(r.u64()), r.err
}

// PointerAttributes describes a pointer: one into HostAlloc's memory is described by the
// worker as its own mapping of it, with the host pointer translated back to the parent's.
func (d *Device) PointerAttributes(p uintptr) (backend.PointerAttrs, error) {
	q := uint64(p)
	reg, off, shared := d.b.host.find(p, 0)
	if shared {
		q = reg.peer + off
	}
	e := request(mPointerAttributes)
	e.u64(q)
	r, err := d.do(e)
	if err != nil {
		return backend.PointerAttrs{}, err
	}
	a := decPointerAttrs(&r)
	if shared && a.HostPointer != 0 {
		a.HostPointer = uintptr(uint64(a.HostPointer)-reg.peer) + reg.base()
	}
	return a, r.err
}
