package sim

import (
	"sync"
	"unsafe"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// allocState is a device's stream-ordered allocator and managed memory.
//
// Pools hand out device allocations (deviceMemory's, so kernels see them like any other) and
// keep freed ones for reuse. A freed block is reused by the stream that freed it at once (stream
// order makes that safe); by another stream once the free has run on the GPU, if the pool allows
// opportunistic reuse or follows event dependencies, or while that stream has a pending wait on
// an event recorded after the free, if the pool follows event dependencies. (The simulator cannot
// see an event wait that has already run, so it treats a completed free as visible through one:
// physically safe, though the real runtime without opportunistic reuse might allocate afresh.)
// Internal dependencies are never inserted.
//
// The release threshold is applied when a pool next allocates after its frees have run, and at
// a synchronization that observes the frees (of the device, or of the stream that freed or an
// event recorded on it after the free), as the real runtime applies it; reading a pool's
// attributes releases nothing.
type allocState struct {
	d *device

	mu      sync.Mutex
	def     *pool
	current *pool
	pools   map[backend.MemPool]*pool // destroyed ones stay until their last block is released
	blocks  map[uint64]*block         // pool allocations in use, by address
	managed map[uint64]*managedRange  // by base address
}

type pool struct {
	h           backend.MemPool
	maxSize     uint64
	handleTypes uint32
	reuse       [4]bool // by PoolAttr 1–3
	threshold   uint64
	reserved    uint64
	reservedHi  uint64
	used        uint64
	usedHi      uint64
	free        []*block
	access      map[int]backend.AccessFlags
	destroyed   bool
}

type block struct {
	p        *pool
	addr     uint64
	size     uint64 // the allocation's size (a reuse may ask for less)
	charged  uint64 // what it counts in the pool's figures
	freedOn  *stream
	freedSeq uint64
}

type managedRange struct {
	addr, size uint64
	flags      uint32
	attrs      rangeAttrs // advice and prefetches, page by page (memrange.go)
}

const noDevice = -2 // cudaInvalidDeviceId

func newAllocState(d *device) *allocState {
	a := &allocState{d: d, pools: map[backend.MemPool]*pool{}, blocks: map[uint64]*block{}, managed: map[uint64]*managedRange{}}
	a.def = a.newPool(backend.PoolProps{})
	a.current = a.def
	return a
}

func (a *allocState) newPool(props backend.PoolProps) *pool {
	p := &pool{
		h:           backend.MemPool(a.d.b.nextHandle()),
		maxSize:     props.MaxSize,
		handleTypes: props.HandleTypes,
		access:      map[int]backend.AccessFlags{},
	}
	p.reuse[backend.PoolReuseFollowEventDependencies] = true
	p.reuse[backend.PoolReuseAllowOpportunistic] = true
	p.reuse[backend.PoolReuseAllowInternalDependencies] = true
	a.pools[p.h] = p
	return p
}

// poolLocked looks up a live pool of this device.
func (a *allocState) poolLocked(op string, h backend.MemPool) (*pool, error) {
	p := a.pools[h]
	if p == nil || p.destroyed {
		return nil, a.d.fail(op, cudaerr.InvalidValue, "%#x is not a live memory pool of device %d", uintptr(h), a.d.ordinal)
	}
	return p, nil
}

func done(s *stream) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// waitsFor reports whether a task still queued on s waits for the first seq tasks of on.
func waitsFor(s, on *stream, seq uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.queue[s.head:] {
		for _, w := range t.waits {
			if w.s == on && w.seq >= seq {
				return true
			}
		}
	}
	return false
}

// settleLocked releases the completed free blocks of p above its threshold (all of them once p
// is destroyed), and forgets a destroyed pool with nothing left.
func (a *allocState) settleLocked(p *pool, keep uint64) { a.settleSeenLocked(p, keep, nil) }

// settleSeenLocked is settleLocked for the blocks seen accepts (all with nil).
func (a *allocState) settleSeenLocked(p *pool, keep uint64, seen func(*block) bool) {
	kept := p.free[:0]
	for _, b := range p.free {
		if (p.reserved > keep || p.destroyed) && done(b.freedOn) >= b.freedSeq && (seen == nil || seen(b)) {
			a.d.mem.remove(b.addr)
			p.reserved -= b.charged
			continue
		}
		kept = append(kept, b)
	}
	clear(p.free[len(kept):])
	p.free = kept
	if p.destroyed && p.reserved == 0 {
		delete(a.pools, p.h)
	}
}

// releaseAtSync gives back, as a synchronization of the real runtime does, the unused memory
// every pool holds above its release threshold: of every free block for a device
// synchronization (on nil), and of the blocks freed on stream on up to its task seq for a
// stream's or an event's. The runtime releases only what the synchronization observes: a
// free on another stream, or one merely seen to have completed, stays in its pool.
func (a *allocState) releaseAtSync(on *stream, seq uint64) {
	var seen func(*block) bool
	if on != nil {
		seen = func(b *block) bool { return b.freedOn == on && b.freedSeq <= seq }
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.settleAllSeenLocked(seen)
}

func (a *allocState) settleAllLocked() { a.settleAllSeenLocked(nil) }

func (a *allocState) settleAllSeenLocked(seen func(*block) bool) {
	for _, p := range a.pools {
		keep := p.threshold
		if p.destroyed {
			keep = 0
		}
		a.settleSeenLocked(p, keep, seen)
	}
}

// reusableLocked picks a free block of p for size bytes on st: the smallest that fits and is
// not more than twice as large.
func (a *allocState) reusableLocked(p *pool, size uint64, st *stream) int {
	best := -1
	for i, b := range p.free {
		if b.size < size || b.size > 2*size || (best >= 0 && b.size >= p.free[best].size) {
			continue
		}
		ok := b.freedOn == st
		if !ok && done(b.freedOn) >= b.freedSeq {
			ok = p.reuse[backend.PoolReuseAllowOpportunistic] || p.reuse[backend.PoolReuseFollowEventDependencies]
		}
		if !ok && p.reuse[backend.PoolReuseFollowEventDependencies] {
			ok = waitsFor(st, b.freedOn, b.freedSeq)
		}
		if ok {
			best = i
		}
	}
	return best
}

func (a *allocState) mallocLocked(op string, p *pool, size uint64, st *stream) (backend.DevicePtr, error) {
	d := a.d
	if size == 0 {
		return 0, d.fail(op, cudaerr.InvalidValue, "stream-ordered allocation of 0 bytes")
	}
	a.settleAllLocked() // every pool, so destroyed pools' last blocks go back too
	var b *block
	if i := a.reusableLocked(p, size, st); i >= 0 {
		b = p.free[i]
		p.free = append(p.free[:i], p.free[i+1:]...)
	} else {
		charged, ok := roundUp(size, allocAlign)
		if !ok {
			return 0, d.fail(op, cudaerr.MemoryAllocation, "%d bytes cannot be allocated", size)
		}
		if p.maxSize > 0 && p.reserved+charged > p.maxSize {
			a.settleLocked(p, 0) // give back what can be given back, then try again
			if p.reserved+charged > p.maxSize {
				return 0, d.fail(op, cudaerr.MemoryAllocation, "pool %#x holds %d of its maximum %d bytes: %d more do not fit",
					uintptr(p.h), p.reserved, p.maxSize, charged)
			}
		}
		al, _ := d.mem.alloc(size)
		if al == nil {
			a.settleLocked(p, 0) // give back what can be given back, then try again
			var detail string
			if al, detail = d.mem.alloc(size); al == nil {
				return 0, d.fail(op, cudaerr.MemoryAllocation, "%s", detail)
			}
		}
		b = &block{p: p, addr: al.addr, size: al.size, charged: al.charged}
		p.reserved += b.charged
		p.reservedHi = max(p.reservedHi, p.reserved)
	}
	b.freedOn, b.freedSeq = nil, 0
	p.used += b.charged
	p.usedHi = max(p.usedHi, p.used)
	a.blocks[b.addr] = b
	return backend.DevicePtr(b.addr), nil
}

// MallocAsync allocates from the device's current pool, in stream order.
func (d *device) MallocAsync(size uint64, s backend.Stream) (backend.DevicePtr, error) {
	const op = "cudaMallocAsync"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	st, err := d.ownStream(op, s)
	if err != nil {
		return 0, err
	}
	if d.allocFails() {
		return 0, d.fail(op, cudaerr.MemoryAllocation, "injected: the allocation of %d bytes failed", size)
	}
	a := d.alloc
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.mallocLocked(op, a.current, size, st)
}

// MallocFromPoolAsync allocates from pool, a pool of this device, in stream order.
func (d *device) MallocFromPoolAsync(size uint64, h backend.MemPool, s backend.Stream) (backend.DevicePtr, error) {
	const op = "cudaMallocFromPoolAsync"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	st, err := d.ownStream(op, s)
	if err != nil {
		return 0, err
	}
	a := d.alloc
	a.mu.Lock()
	defer a.mu.Unlock()
	p, err := a.poolLocked(op, h)
	if err != nil {
		return 0, err
	}
	return a.mallocLocked(op, p, size, st)
}

// FreeAsync returns a pool allocation to its pool once s reaches this point.
func (d *device) FreeAsync(ptr backend.DevicePtr, s backend.Stream) error {
	const op = "cudaFreeAsync"
	if err := d.alive(op); err != nil {
		return err
	}
	st, err := d.ownStream(op, s)
	if err != nil {
		return err
	}
	a := d.alloc
	a.mu.Lock()
	defer a.mu.Unlock()
	b := a.blocks[uint64(ptr)]
	if b == nil {
		d.mem.mu.RLock()
		detail := d.describeLocked(uint64(ptr))
		d.mem.mu.RUnlock()
		return d.fail(op, cudaerr.InvalidValue, "%#x is not a live stream-ordered allocation: %s", uint64(ptr), detail)
	}
	delete(a.blocks, b.addr)
	b.freedOn, b.freedSeq = st, d.submit(st, &task{name: "stream-ordered free"})
	b.p.used -= b.charged
	b.p.free = append(b.p.free, b)
	if b.p.destroyed {
		a.settleLocked(b.p, 0)
	}
	return nil
}

// MemPoolCreate creates a pool on this device.
func (d *device) MemPoolCreate(props backend.PoolProps) (backend.MemPool, error) {
	const op = "cudaMemPoolCreate"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	if props.Location.Type != backend.LocationDevice || int(props.Location.ID) != d.ordinal {
		return 0, d.fail(op, cudaerr.InvalidValue, "pool location %+v is not device %d", props.Location, d.ordinal)
	}
	if props.HandleTypes&^(backend.HandlePosixFileDescriptor|backend.HandleFabric) != 0 {
		return 0, d.fail(op, cudaerr.InvalidValue, "unknown handle types %#x", props.HandleTypes)
	}
	if props.HandleTypes&backend.HandleFabric != 0 {
		return 0, d.fail(op, cudaerr.NotSupported, "fabric handles are not simulated")
	}
	a := d.alloc
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.newPool(props).h, nil
}

// MemPoolDestroy destroys a created pool; its blocks in use are released when freed. The
// current pool reverts to the default one.
func (d *device) MemPoolDestroy(h backend.MemPool) error {
	const op = "cudaMemPoolDestroy"
	if err := d.alive(op); err != nil {
		return err
	}
	a := d.alloc
	a.mu.Lock()
	defer a.mu.Unlock()
	p, err := a.poolLocked(op, h)
	if err != nil {
		return err
	}
	if p == a.def {
		return d.fail(op, cudaerr.InvalidValue, "the default pool of device %d cannot be destroyed", d.ordinal)
	}
	p.destroyed = true
	if a.current == p {
		a.current = a.def
	}
	a.settleLocked(p, 0)
	return nil
}

// DefaultMemPool is the device's default pool.
func (d *device) DefaultMemPool() (backend.MemPool, error) {
	return d.alloc.def.h, d.alive("cudaDeviceGetDefaultMemPool")
}

// CurrentMemPool is the pool MallocAsync uses.
func (d *device) CurrentMemPool() (backend.MemPool, error) {
	a := d.alloc
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.current.h, d.alive("cudaDeviceGetMemPool")
}

// SetCurrentMemPool makes a pool of this device the one MallocAsync uses.
func (d *device) SetCurrentMemPool(h backend.MemPool) error {
	const op = "cudaDeviceSetMemPool"
	if err := d.alive(op); err != nil {
		return err
	}
	a := d.alloc
	a.mu.Lock()
	defer a.mu.Unlock()
	p, err := a.poolLocked(op, h)
	if err != nil {
		return err
	}
	a.current = p
	return nil
}

// MemPoolSetAttribute sets a reuse flag, the release threshold, or resets a high watermark
// (only to 0, as the runtime allows).
func (d *device) MemPoolSetAttribute(h backend.MemPool, attr backend.PoolAttr, value uint64) error {
	const op = "cudaMemPoolSetAttribute"
	if err := d.alive(op); err != nil {
		return err
	}
	a := d.alloc
	a.mu.Lock()
	defer a.mu.Unlock()
	p, err := a.poolLocked(op, h)
	if err != nil {
		return err
	}
	switch attr {
	case backend.PoolReuseFollowEventDependencies, backend.PoolReuseAllowOpportunistic, backend.PoolReuseAllowInternalDependencies:
		p.reuse[attr] = uint32(value) != 0
	case backend.PoolReleaseThreshold:
		p.threshold = value
	case backend.PoolReservedMemHigh, backend.PoolUsedMemHigh:
		if value != 0 {
			return d.fail(op, cudaerr.InvalidValue, "a high watermark can only be reset to 0, not set to %d", value)
		}
		if attr == backend.PoolReservedMemHigh {
			p.reservedHi = p.reserved
		} else {
			p.usedHi = p.used
		}
	default:
		return d.fail(op, cudaerr.InvalidValue, "pool attribute %d cannot be set", int32(attr))
	}
	return nil
}

// MemPoolGetAttribute reads a pool attribute.
func (d *device) MemPoolGetAttribute(h backend.MemPool, attr backend.PoolAttr) (uint64, error) {
	const op = "cudaMemPoolGetAttribute"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	a := d.alloc
	a.mu.Lock()
	defer a.mu.Unlock()
	p, err := a.poolLocked(op, h)
	if err != nil {
		return 0, err
	}
	switch attr {
	case backend.PoolReuseFollowEventDependencies, backend.PoolReuseAllowOpportunistic, backend.PoolReuseAllowInternalDependencies:
		if p.reuse[attr] {
			return 1, nil
		}
		return 0, nil
	case backend.PoolReleaseThreshold:
		return p.threshold, nil
	case backend.PoolReservedMemCurrent:
		return p.reserved, nil
	case backend.PoolReservedMemHigh:
		return p.reservedHi, nil
	case backend.PoolUsedMemCurrent:
		return p.used, nil
	case backend.PoolUsedMemHigh:
		return p.usedHi, nil
	}
	return 0, d.fail(op, cudaerr.InvalidValue, "unknown pool attribute %d", int32(attr))
}

// MemPoolTrimTo releases the pool's unused blocks whose frees have run, down to keep bytes.
func (d *device) MemPoolTrimTo(h backend.MemPool, keep uint64) error {
	const op = "cudaMemPoolTrimTo"
	if err := d.alive(op); err != nil {
		return err
	}
	a := d.alloc
	a.mu.Lock()
	defer a.mu.Unlock()
	p, err := a.poolLocked(op, h)
	if err != nil {
		return err
	}
	a.settleLocked(p, keep)
	return nil
}

// MemPoolSetAccess sets a peer device's access; the owning device always has read-write
// access, which cannot be changed.
func (d *device) MemPoolSetAccess(h backend.MemPool, ordinal int, flags backend.AccessFlags) error {
	const op = "cudaMemPoolSetAccess"
	if err := d.alive(op); err != nil {
		return err
	}
	if ordinal < 0 || ordinal >= len(d.b.devices) {
		return d.fail(op, cudaerr.InvalidDevice, "device %d does not exist", ordinal)
	}
	if flags != backend.AccessNone && flags != backend.AccessRead && flags != backend.AccessReadWrite {
		return d.fail(op, cudaerr.InvalidValue, "unknown access flags %d", int32(flags))
	}
	if flags == backend.AccessRead {
		return d.fail(op, cudaerr.InvalidValue, "read-only access is not supported for device memory pools")
	}
	a := d.alloc
	a.mu.Lock()
	defer a.mu.Unlock()
	p, err := a.poolLocked(op, h)
	if err != nil {
		return err
	}
	if ordinal == d.ordinal {
		if flags != backend.AccessReadWrite {
			return d.fail(op, cudaerr.InvalidValue, "the owning device's access to its pool cannot be changed")
		}
		return nil
	}
	p.access[ordinal] = flags
	return nil
}

// MemPoolGetAccess is a device's access to the pool's memory.
func (d *device) MemPoolGetAccess(h backend.MemPool, ordinal int) (backend.AccessFlags, error) {
	const op = "cudaMemPoolGetAccess"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	if ordinal < 0 || ordinal >= len(d.b.devices) {
		return 0, d.fail(op, cudaerr.InvalidDevice, "device %d does not exist", ordinal)
	}
	a := d.alloc
	a.mu.Lock()
	defer a.mu.Unlock()
	p, err := a.poolLocked(op, h)
	if err != nil {
		return 0, err
	}
	if ordinal == d.ordinal {
		return backend.AccessReadWrite, nil
	}
	return p.access[ordinal], nil
}

// MallocManaged allocates managed memory: device memory the host may also address (through
// ManagedHost, since simulated device addresses are not host addresses).
func (d *device) MallocManaged(size uint64, flags uint32) (backend.DevicePtr, error) {
	const op = "cudaMallocManaged"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	if flags != backend.AttachGlobal && flags != backend.AttachHost {
		return 0, d.fail(op, cudaerr.InvalidValue, "managed allocation flags must be AttachGlobal or AttachHost, not %#x", flags)
	}
	if size == 0 {
		return 0, d.fail(op, cudaerr.InvalidValue, "managed allocation of 0 bytes")
	}
	al, detail := d.mem.alloc(size)
	if al == nil {
		return 0, d.fail(op, cudaerr.MemoryAllocation, "%s", detail)
	}
	a := d.alloc
	a.mu.Lock()
	a.managed[al.addr] = &managedRange{addr: al.addr, size: size, flags: flags, attrs: newRangeAttrs(size)}
	a.mu.Unlock()
	return backend.DevicePtr(al.addr), nil
}

// managedLocked finds the live managed range holding [p, p+n), forgetting ranges freed since.
func (a *allocState) managedLocked(op string, p backend.DevicePtr, n uint64) (*managedRange, error) {
	addr := uint64(p)
	var found *managedRange
	for base, m := range a.managed {
		if addr >= base && addr < base+m.size {
			found = m
			break
		}
	}
	if found != nil && a.d.checkBase(found.addr) != "" { // freed with Free
		delete(a.managed, found.addr)
		found = nil
	}
	if found == nil {
		return nil, a.d.fail(op, cudaerr.InvalidValue, "%#x is not managed memory", addr)
	}
	if n > found.size-(addr-found.addr) {
		return nil, a.d.fail(op, cudaerr.InvalidValue, "%d bytes at %#x run past the end of the %d-byte managed allocation at %#x",
			n, addr, found.size, found.addr)
	}
	return found, nil
}

// ManagedHost is the host address of managed memory.
func (d *device) ManagedHost(p backend.DevicePtr, n uint64) (unsafe.Pointer, error) {
	const op = "ManagedHost"
	a := d.alloc
	a.mu.Lock()
	_, err := a.managedLocked(op, p, max(n, 1))
	a.mu.Unlock()
	if err != nil {
		return nil, err
	}
	b, detail := d.resolve(p, max(n, 1))
	if detail != "" {
		return nil, d.fail(op, cudaerr.InvalidValue, "%s", detail)
	}
	return unsafe.Pointer(unsafe.SliceData(b)), nil
}

// StreamAttachMem checks the attachment and queues it (nothing to move on the simulator).
func (d *device) StreamAttachMem(s backend.Stream, p backend.DevicePtr, n uint64, flags uint32) error {
	const op = "cudaStreamAttachMemAsync"
	if err := d.alive(op); err != nil {
		return err
	}
	st, err := d.ownStream(op, s)
	if err != nil {
		return err
	}
	if flags != backend.AttachGlobal && flags != backend.AttachHost && flags != backend.AttachSingle {
		return d.fail(op, cudaerr.InvalidValue, "attach flags must be one of AttachGlobal, AttachHost, AttachSingle, not %#x", flags)
	}
	a := d.alloc
	a.mu.Lock()
	m, err := a.managedLocked(op, p, 1)
	a.mu.Unlock()
	if err != nil {
		return err
	}
	if uint64(p) != m.addr || (n != 0 && n != m.size) {
		return d.fail(op, cudaerr.InvalidValue, "attach must cover the whole managed allocation at %#x (%d bytes)", m.addr, m.size)
	}
	d.submit(st, &task{name: "attach managed memory"})
	return nil
}

// PointerAttributes classifies p: device or managed memory of any simulated device, pinned
// host memory, or unregistered.
func (d *device) PointerAttributes(p uintptr) (backend.PointerAttrs, error) {
	const op = "cudaPointerGetAttributes"
	if err := d.alive(op); err != nil {
		return backend.PointerAttrs{}, err
	}
	unknown := backend.PointerAttrs{Type: backend.MemoryUnregistered, Device: noDevice}
	if owner := d.b.ownerOf(uint64(p)); owner != nil {
		if _, detail := owner.resolve(backend.DevicePtr(p), 1); detail != "" {
			return unknown, nil
		}
		oa := owner.alloc
		oa.mu.Lock()
		m, _ := oa.findManagedQuiet(uint64(p))
		oa.mu.Unlock()
		if m == nil {
			return backend.PointerAttrs{Type: backend.MemoryDevice, Device: owner.ordinal, DevicePointer: p}, nil
		}
		host, err := owner.ManagedHost(backend.DevicePtr(p), 1)
		if err != nil {
			return unknown, nil
		}
		return backend.PointerAttrs{Type: backend.MemoryManaged, Device: owner.ordinal, DevicePointer: p, HostPointer: uintptr(host)}, nil
	}
	h := &d.b.host
	h.mu.Lock()
	r := h.findLocked(p)
	mapped := r != nil && r.mappedLocked()
	h.mu.Unlock()
	if r == nil {
		return unknown, nil
	}
	a := backend.PointerAttrs{Type: backend.MemoryHost, Device: d.ordinal, HostPointer: p}
	if mapped { // devices address it at its host address (mapped.go)
		a.DevicePointer = p
	}
	return a, nil
}

// findManagedQuiet is managedLocked without recording an error.
func (a *allocState) findManagedQuiet(addr uint64) (*managedRange, bool) {
	for base, m := range a.managed {
		if addr >= base && addr < base+m.size && a.d.checkBase(base) == "" {
			return m, true
		}
	}
	return nil, false
}

// HostDevicePointer is p itself for mapped host memory, as under unified addressing: memory
// from HostAlloc, or registered with HostRegisterMapped. Simulated kernels dereference it as
// the host bytes (mapped.go).
func (d *device) HostDevicePointer(p unsafe.Pointer) (backend.DevicePtr, error) {
	const op = "cudaHostGetDevicePointer"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	h := &d.b.host
	h.mu.Lock()
	r := h.findLocked(uintptr(p))
	mapped := r != nil && r.mappedLocked()
	h.mu.Unlock()
	switch {
	case r == nil:
		return 0, d.fail(op, cudaerr.InvalidValue, "%p is not pinned host memory", p)
	case !mapped:
		return 0, d.fail(op, cudaerr.InvalidValue, "%p is host memory registered without HostRegisterMapped: it has no device address", p)
	}
	return backend.DevicePtr(uintptr(p)), nil
}
