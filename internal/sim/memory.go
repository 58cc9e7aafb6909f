package sim

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// allocation is one live cudaMalloc: [addr, addr+size) backed by mem. The next allocation
// starts at or after addr+span, so the bytes in between (alignment padding and the guard
// gap) belong to nothing.
type allocation struct {
	addr    uint64
	size    uint64
	charged uint64 // size rounded up to allocAlign: what counts against the capacity
	span    uint64 // charged + guardGap
	mem     []byte
}

// freedRange remembers a freed allocation, to explain use-after-free errors.
type freedRange struct{ addr, size uint64 }

// deviceMemory is a device's address space.
type deviceMemory struct {
	capacity    uint64
	start, stop uint64 // the device's address range [start, stop)

	mu     sync.RWMutex
	allocs []*allocation // live, sorted by addr
	next   uint64        // bump pointer: at or above every live allocation's span
	used   uint64        // bytes charged against the capacity
	freed  [64]freedRange
	nfreed int
}

func (m *deviceMemory) init(ordinal int, capacity uint64) {
	m.capacity = capacity
	m.start = addrBase + uint64(ordinal)<<addrShift
	m.stop = m.start + 1<<addrShift
	m.next = m.start + firstOffset
}

func (m *deviceMemory) inUse() uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.used
}

// findLocked returns the live allocation with the highest address at or below p, or nil.
func (m *deviceMemory) findLocked(p uint64) *allocation {
	i := sort.Search(len(m.allocs), func(i int) bool { return m.allocs[i].addr > p })
	if i == 0 {
		return nil
	}
	return m.allocs[i-1]
}

// placeLocked finds addresses for span bytes: fresh addresses while the range lasts (so that
// a stale pointer keeps failing), then the first gap that fits.
func (m *deviceMemory) placeLocked(span uint64) (addr uint64, index int, ok bool) {
	if m.stop-m.next >= span {
		addr = m.next
		m.next += span
		return addr, len(m.allocs), true
	}
	prev := m.start + firstOffset
	for i, a := range m.allocs {
		if a.addr-prev >= span {
			return prev, i, true
		}
		prev = a.addr + a.span
	}
	if m.stop-prev >= span {
		m.next = prev + span
		return prev, len(m.allocs), true
	}
	return 0, 0, false
}

// alloc allocates size (> 0) bytes, or explains why it cannot.
func (m *deviceMemory) alloc(size uint64) (*allocation, string) {
	charged, ok := roundUp(size, allocAlign)
	m.mu.Lock()
	if !ok || charged > m.capacity-m.used {
		free := m.capacity - m.used
		m.mu.Unlock()
		return nil, fmt.Sprintf("%d bytes requested, %d of the device's %d bytes are free", size, free, m.capacity)
	}
	m.used += charged // reserve, then allocate the backing store without holding the lock
	m.mu.Unlock()

	mem, err := alignedBytes(size, 64)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.used -= charged
		return nil, fmt.Sprintf("no host RAM for the %d-byte backing store: %v", size, err)
	}
	// Allocations start at the texture alignment, as the runtime's do in practice (textures
	// over linear memory need it), though cudaMalloc promises only allocAlign.
	a := &allocation{size: size, charged: charged, span: (charged+textureAlign-1)&^(textureAlign-1) + guardGap, mem: mem}
	addr, i, ok := m.placeLocked(a.span)
	if !ok {
		m.used -= charged
		return nil, fmt.Sprintf("no room for %d bytes in the device's address range (fragmented)", size)
	}
	a.addr = addr
	m.allocs = slices.Insert(m.allocs, i, a)
	return a, ""
}

// remove frees the allocation that starts at p.
func (m *deviceMemory) remove(p uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := sort.Search(len(m.allocs), func(i int) bool { return m.allocs[i].addr >= p })
	if i == len(m.allocs) || m.allocs[i].addr != p {
		return false
	}
	a := m.allocs[i]
	m.allocs = slices.Delete(m.allocs, i, i+1)
	m.used -= a.charged
	m.freed[m.nfreed%len(m.freed)] = freedRange{addr: a.addr, size: a.size}
	m.nfreed++
	return true
}

// resolve returns the backing bytes of [p, p+n) (n > 0 for a meaningful check), or explains
// why the range is not inside one live allocation of d.
func (d *device) resolve(p backend.DevicePtr, n uint64) ([]byte, string) {
	addr := uint64(p)
	m := &d.mem
	m.mu.RLock()
	defer m.mu.RUnlock()
	if a := m.findLocked(addr); a != nil && addr < a.addr+a.size {
		off := addr - a.addr
		if n > a.size-off {
			return nil, fmt.Sprintf("%d bytes at %#x run %d bytes past the end of the %d-byte allocation at %#x",
				n, addr, n-(a.size-off), a.size, a.addr)
		}
		return a.mem[off : off+n : off+n], ""
	}
	return nil, d.describeLocked(addr)
}

// extent is how many bytes of its allocation lie at and after p.
func (d *device) extent(p backend.DevicePtr) (uint64, string) {
	addr := uint64(p)
	m := &d.mem
	m.mu.RLock()
	defer m.mu.RUnlock()
	if a := m.findLocked(addr); a != nil && addr < a.addr+a.size {
		return a.addr + a.size - addr, ""
	}
	return 0, d.describeLocked(addr)
}

// describeLocked explains why addr is not inside a live allocation of d.
func (d *device) describeLocked(addr uint64) string {
	m := &d.mem
	if addr == 0 {
		return "null device pointer"
	}
	if owner := d.b.ownerOf(addr); owner == nil {
		return fmt.Sprintf("%#x is not a device address (the simulator's device memory starts at %#x)", addr, addrBase)
	} else if owner != d {
		return fmt.Sprintf("%#x is device %d's memory, not device %d's", addr, owner.ordinal, d.ordinal)
	}
	if a := m.findLocked(addr); a != nil && addr < a.addr+a.span {
		return fmt.Sprintf("%#x is outside the %d-byte allocation at %#x, %d bytes after its last byte",
			addr, a.size, a.addr, addr-(a.addr+a.size-1))
	}
	for i := range min(m.nfreed, len(m.freed)) {
		f := m.freed[(m.nfreed-1-i)%len(m.freed)]
		if addr >= f.addr && addr < f.addr+max(f.size, 1) {
			return fmt.Sprintf("%#x is inside the %d-byte allocation at %#x, which was freed", addr, f.size, f.addr)
		}
	}
	return fmt.Sprintf("%#x is not inside any live allocation of device %d", addr, d.ordinal)
}

// resolveAny resolves [p, p+n) on whichever device of the backend owns p (unified addressing:
// copies between devices are legal).
func (d *device) resolveAny(p backend.DevicePtr, n uint64) ([]byte, string) {
	if owner := d.b.ownerOf(uint64(p)); owner != nil {
		return owner.resolve(p, n)
	}
	return d.resolve(p, n)
}

// alignedBytes allocates n zeroed bytes whose address is a multiple of align (a power of two).
func alignedBytes(n uint64, align uintptr) (b []byte, err error) {
	if n > math.MaxInt-uint64(align) {
		return nil, fmt.Errorf("%d bytes do not fit in this process's address space", n)
	}
	defer func() {
		if r := recover(); r != nil { // makeslice: len out of range
			b, err = nil, fmt.Errorf("%v", r)
		}
	}()
	raw := make([]byte, int(n)+int(align)-1)
	off := int((align - uintptr(unsafe.Pointer(unsafe.SliceData(raw)))%align) % align)
	return raw[off : off+int(n) : off+int(n)], nil
}

// memView is the device memory a kernel launch sees. It remembers whether the kernel tried an
// access outside its allocations, so that the fault that follows is reported as an illegal
// address.
type memView struct {
	d   *device
	oob atomic.Bool
}

// Bytes implements backend.DeviceMemory. Zero bytes are always accessible.
func (v *memView) Bytes(p backend.DevicePtr, n uint64) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	b, detail := v.d.kernelView(p, n)
	if detail != "" {
		v.oob.Store(true)
		return nil, newError("", cudaerr.IllegalAddress, "kernel access: "+detail)
	}
	return b, nil
}

// Extent implements backend.DeviceMemory.
func (v *memView) Extent(p backend.DevicePtr) (uint64, error) {
	n, detail := v.d.kernelExtent(p)
	if detail != "" {
		v.oob.Store(true)
		return 0, newError("", cudaerr.IllegalAddress, "kernel access: "+detail)
	}
	return n, nil
}

// Malloc allocates device memory. Malloc(0) returns the null pointer and no error, as
// cudaMalloc does.
func (d *device) Malloc(size uint64) (backend.DevicePtr, error) {
	const op = "cudaMalloc"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	if size == 0 {
		return 0, nil
	}
	if d.allocFails() {
		return 0, d.fail(op, cudaerr.MemoryAllocation, "injected: the allocation of %d bytes failed", size)
	}
	a, detail := d.mem.alloc(size)
	if a == nil {
		return 0, d.fail(op, cudaerr.MemoryAllocation, "%s", detail)
	}
	return backend.DevicePtr(a.addr), nil
}

// Free releases device memory. Like cudaFree it first waits for all work on the device.
// Free(0) does nothing.
func (d *device) Free(p backend.DevicePtr) error {
	const op = "cudaFree"
	if err := d.alive(op); err != nil {
		return err
	}
	if p == 0 {
		return nil
	}
	if detail := d.checkBase(uint64(p)); detail != "" {
		return d.fail(op, cudaerr.InvalidValue, "%s", detail)
	}
	d.waitIdle()
	if err := d.alive(op); err != nil {
		return err
	}
	if !d.mem.remove(uint64(p)) {
		return d.fail(op, cudaerr.InvalidValue, "%#x was freed while Free waited for the device", uint64(p))
	}
	return nil
}

// checkBase explains why addr is not the start of a live allocation of d, or returns "".
func (d *device) checkBase(addr uint64) string {
	m := &d.mem
	m.mu.RLock()
	defer m.mu.RUnlock()
	a := m.findLocked(addr)
	switch {
	case a != nil && a.addr == addr:
		return ""
	case a != nil && addr < a.addr+a.size:
		return fmt.Sprintf("%#x is %d bytes into the allocation at %#x, not its start", addr, addr-a.addr, a.addr)
	}
	return d.describeLocked(addr)
}

// hostRange is page-locked host memory: from HostAlloc (allocated) or HostRegister.
type hostRange struct {
	base      uintptr
	size      uint64
	allocated bool
	flags     uint32         // HostAlloc's or HostRegister's flags (hostflags.go, mapped.go)
	buf       []byte         // HostAlloc's memory
	keep      unsafe.Pointer // HostRegister's memory, kept alive while registered
}

// hostMemory tracks the machine's page-locked ranges (shared by all devices, like portable
// pinned memory).
type hostMemory struct {
	mu     sync.Mutex
	ranges []*hostRange // sorted by base, disjoint
	inPin  uint64       // bytes page-locked now: HostAlloc's and HostRegister's
	limit  uint64       // the most inPin may reach (pinnedLimit)
}

// pinnedLimit is how much host memory HostAlloc and HostRegister page-lock in all: half the
// machine's RAM, as the real runtime cannot pin more than the RAM there is, and a Go
// allocation past it would end the process instead of failing (8 GiB where the RAM cannot be
// told). HostRegister counts too: an isolated device's worker registers the memory its
// parent maps for it, which a sparse file lets be of any size.
func pinnedLimit() uint64 {
	if ram := physicalRAM(); ram > 0 {
		return ram / 2
	}
	return 8 << 30
}

// reserve counts n more bytes of pinned memory, or reports that they would pass the limit.
func (h *hostMemory) reserve(n uint64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n > h.limit || h.inPin > h.limit-n {
		return false
	}
	h.inPin += n
	return true
}

// unreserve gives back n bytes that reserve counted.
func (h *hostMemory) unreserve(n uint64) {
	h.mu.Lock()
	h.inPin -= n
	h.mu.Unlock()
}

// inUse is how many bytes of HostAlloc memory are out.
func (h *hostMemory) inUse() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inPin
}

// findLocked returns the range holding p, or nil.
func (h *hostMemory) findLocked(p uintptr) *hostRange {
	i := sort.Search(len(h.ranges), func(i int) bool { return h.ranges[i].base > p })
	if i == 0 {
		return nil
	}
	if r := h.ranges[i-1]; uint64(p-r.base) < r.size {
		return r
	}
	return nil
}

// add inserts r unless it overlaps a range already tracked, which it returns.
func (h *hostMemory) add(r *hostRange) *hostRange {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := sort.Search(len(h.ranges), func(i int) bool { return h.ranges[i].base >= r.base })
	if i > 0 {
		if prev := h.ranges[i-1]; uint64(r.base-prev.base) < prev.size {
			return prev
		}
	}
	if i < len(h.ranges) {
		if next := h.ranges[i]; uint64(next.base-r.base) < r.size {
			return next
		}
	}
	h.ranges = slices.Insert(h.ranges, i, r)
	return nil
}

// remove deletes the range starting at p whose allocated flag is allocated, giving back
// the pinned bytes counted for it.
func (h *hostMemory) remove(p uintptr, allocated bool) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := sort.Search(len(h.ranges), func(i int) bool { return h.ranges[i].base >= p })
	if i == len(h.ranges) || h.ranges[i].base != p || h.ranges[i].allocated != allocated {
		return false
	}
	h.inPin -= h.ranges[i].size
	h.ranges = slices.Delete(h.ranges, i, i+1)
	return true
}

// pinned reports whether [p, p+n) lies inside one page-locked range.
func (h *hostMemory) pinned(p unsafe.Pointer, n uint64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.findLocked(uintptr(p))
	return r != nil && n <= r.size-uint64(uintptr(p)-r.base)
}

// HostAlloc allocates page-locked host memory, 64-byte aligned and zeroed. HostAlloc(0)
// returns nil and no error.
func (d *device) HostAlloc(size uint64, flags uint32) (unsafe.Pointer, error) {
	const op = "cudaHostAlloc"
	if err := d.alive(op); err != nil {
		return nil, err
	}
	if flags&^(backend.HostAllocPortable|backend.HostAllocMapped|backend.HostAllocWriteCombined) != 0 {
		return nil, d.fail(op, cudaerr.InvalidValue, "unknown cudaHostAlloc flags %#x", flags)
	}
	if size == 0 {
		return nil, nil
	}
	if d.allocFails() {
		return nil, d.fail(op, cudaerr.MemoryAllocation, "injected: the allocation of %d pinned bytes failed", size)
	}
	if !d.b.host.reserve(size) {
		return nil, d.fail(op, cudaerr.MemoryAllocation, "%d bytes of pinned host memory: past the simulator's %d-byte limit (half the machine's RAM), %d in use",
			size, d.b.host.limit, d.b.host.inUse())
	}
	buf, err := alignedBytes(size, 64)
	if err != nil {
		d.b.host.unreserve(size)
		return nil, d.fail(op, cudaerr.MemoryAllocation, "%d bytes of host memory: %v", size, err)
	}
	p := unsafe.Pointer(unsafe.SliceData(buf))
	d.b.host.add(&hostRange{base: uintptr(p), size: size, allocated: true, flags: flags, buf: buf})
	return p, nil
}

// HostFree releases memory from HostAlloc. HostFree(nil) does nothing.
func (d *device) HostFree(p unsafe.Pointer) error {
	const op = "cudaFreeHost"
	if err := d.alive(op); err != nil {
		return err
	}
	if p == nil {
		return nil
	}
	if !d.b.host.remove(uintptr(p), true) {
		return d.fail(op, cudaerr.InvalidValue, "%p is not the start of memory from HostAlloc (unknown, or already freed)", p)
	}
	return nil
}

// HostRegister page-locks [p, p+size) and keeps that memory alive until HostUnregister.
func (d *device) HostRegister(p unsafe.Pointer, size uint64, flags uint32) error {
	const op = "cudaHostRegister"
	if err := d.alive(op); err != nil {
		return err
	}
	if flags&^(backend.HostRegisterPortable|backend.HostRegisterMapped|backend.HostRegisterIoMemory|backend.HostRegisterReadOnly) != 0 {
		return d.fail(op, cudaerr.InvalidValue, "unknown cudaHostRegister flags %#x", flags)
	}
	if p == nil || size == 0 {
		return d.fail(op, cudaerr.InvalidValue, "cannot register %d bytes at %p", size, p)
	}
	if uint64(uintptr(p))+size < uint64(uintptr(p)) {
		return d.fail(op, cudaerr.InvalidValue, "%d bytes at %p wrap around the address space", size, p)
	}
	if !d.b.host.reserve(size) {
		return d.fail(op, cudaerr.MemoryAllocation, "%d bytes of host memory to page-lock: past the simulator's %d-byte limit (half the machine's RAM), %d in use",
			size, d.b.host.limit, d.b.host.inUse())
	}
	if old := d.b.host.add(&hostRange{base: uintptr(p), size: size, flags: flags, keep: p}); old != nil {
		d.b.host.unreserve(size)
		what := "registered"
		if old.allocated {
			what = "allocated with HostAlloc"
		}
		return d.fail(op, cudaerr.HostMemoryAlreadyRegistered, "%d bytes at %p overlap the %d bytes at %#x already %s",
			size, p, old.size, old.base, what)
	}
	return nil
}

// HostUnregister undoes HostRegister; p must be the start of a registered range.
func (d *device) HostUnregister(p unsafe.Pointer) error {
	const op = "cudaHostUnregister"
	if err := d.alive(op); err != nil {
		return err
	}
	if !d.b.host.remove(uintptr(p), false) {
		return d.fail(op, cudaerr.HostMemoryNotRegistered, "%p is not the start of a range registered with HostRegister", p)
	}
	return nil
}

// CopyHtoD copies n bytes of host memory to the device on s. From pageable memory the source
// is read before CopyHtoD returns; from pinned memory when the stream reaches the copy.
func (d *device) CopyHtoD(dst backend.DevicePtr, src unsafe.Pointer, n uint64, s backend.Stream) error {
	const op = "cudaMemcpyAsync"
	if err := d.alive(op); err != nil {
		return err
	}
	st, err := d.ownStream(op, s)
	if err != nil || n == 0 {
		return err
	}
	if src == nil {
		return d.fail(op, cudaerr.InvalidValue, "host-to-device copy of %d bytes from a nil host pointer", n)
	}
	if _, detail := d.resolve(dst, n); detail != "" {
		return d.fail(op, cudaerr.InvalidValue, "host-to-device copy destination: %s", detail)
	}
	from := unsafe.Slice((*byte)(src), n)
	if !d.b.host.pinned(src, n) {
		from = slices.Clone(from) // pageable: staged now, the caller may reuse src
	}
	d.submit(st, &task{name: "host-to-device copy", run: d.hostCopy("host-to-device copy destination", dst, from, true)})
	return nil
}

// hostCopy is the work of a copy between host bytes and the device span at p of len(host)
// bytes, in the direction toDevice says, for stream copies and graph copy nodes alike. The
// span is resolved when the work runs: memory freed since faults the device, as a real copy
// of it would.
func (d *device) hostCopy(what string, p backend.DevicePtr, host []byte, toDevice bool) func() {
	return func() {
		span, detail := d.resolve(p, uint64(len(host)))
		if detail != "" {
			d.setFault(cudaerr.IllegalAddress, what+": "+detail)
			return
		}
		if toDevice {
			copy(span, host)
		} else {
			copy(host, span)
		}
	}
}

// CopyDtoH copies n bytes from the device to host memory on s. Into pageable memory it
// returns once the copy is done; into pinned memory at once.
func (d *device) CopyDtoH(dst unsafe.Pointer, src backend.DevicePtr, n uint64, s backend.Stream) error {
	const op = "cudaMemcpyAsync"
	if err := d.alive(op); err != nil {
		return err
	}
	st, err := d.ownStream(op, s)
	if err != nil || n == 0 {
		return err
	}
	if dst == nil {
		return d.fail(op, cudaerr.InvalidValue, "device-to-host copy of %d bytes to a nil host pointer", n)
	}
	if _, detail := d.resolve(src, n); detail != "" {
		return d.fail(op, cudaerr.InvalidValue, "device-to-host copy source: %s", detail)
	}
	to := unsafe.Slice((*byte)(dst), n)
	pinned := d.b.host.pinned(dst, n)
	seq := d.submit(st, &task{name: "device-to-host copy", run: d.hostCopy("device-to-host copy source", src, to, false)})
	if !pinned {
		st.wait(seq)
		return d.alive(op)
	}
	return nil
}

// CopyDtoD copies n bytes between device addresses on s. Either address may belong to another
// device of the simulator (a peer copy, legal under unified addressing).
func (d *device) CopyDtoD(dst, src backend.DevicePtr, n uint64, s backend.Stream) error {
	const op = "cudaMemcpyAsync"
	if err := d.alive(op); err != nil {
		return err
	}
	st, err := d.ownStream(op, s)
	if err != nil || n == 0 {
		return err
	}
	return d.queueCopy(op, "device-to-device copy", st, func() ([]byte, string) { return d.resolveAny(src, n) },
		func() ([]byte, string) { return d.resolveAny(dst, n) })
}

// queueCopy queues a copy between two device ranges on st. Both ends are checked now (a bad
// range is the call's error, as the runtime's) and again when the copy runs (memory freed in
// between is an illegal address, a sticky fault).
func (d *device) queueCopy(op, what string, st *stream, src, dst func() ([]byte, string)) error {
	if _, detail := src(); detail != "" {
		return d.fail(op, cudaerr.InvalidValue, "%s source: %s", what, detail)
	}
	if _, detail := dst(); detail != "" {
		return d.fail(op, cudaerr.InvalidValue, "%s destination: %s", what, detail)
	}
	d.submit(st, &task{name: what, run: func() {
		from, detail := src()
		if detail != "" {
			d.setFault(cudaerr.IllegalAddress, what+" source: "+detail)
			return
		}
		to, detail := dst()
		if detail != "" {
			d.setFault(cudaerr.IllegalAddress, what+" destination: "+detail)
			return
		}
		copy(to, from)
	}})
	return nil
}

// Memset sets n bytes at p to value on s.
func (d *device) Memset(p backend.DevicePtr, value byte, n uint64, s backend.Stream) error {
	const op = "cudaMemsetAsync"
	if err := d.alive(op); err != nil {
		return err
	}
	st, err := d.ownStream(op, s)
	if err != nil || n == 0 {
		return err
	}
	if _, detail := d.resolve(p, n); detail != "" {
		return d.fail(op, cudaerr.InvalidValue, "memset destination: %s", detail)
	}
	d.submit(st, &task{name: "memset", run: func() {
		to, detail := d.resolve(p, n)
		if detail != "" {
			d.setFault(cudaerr.IllegalAddress, "memset destination: "+detail)
			return
		}
		if value == 0 {
			clear(to)
			return
		}
		for i := range to {
			to[i] = value
		}
	}})
	return nil
}
