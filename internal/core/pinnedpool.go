package core

import (
	"context"
	"math/bits"
	"sync"
)

// PinnedPool keeps a device's pinned host buffers for reuse: the state alloc.PinnedPool is a
// face over (whose doc says why). Each device has one, made on first use. Safe for concurrent
// use.
type PinnedPool struct {
	dev *Device

	mu     sync.Mutex
	free   map[uint64][]*HostBuffer // by size class
	cached uint64                   // bytes in free
	limit  uint64                   // most bytes kept in free
	hits   uint64
	misses uint64
}

// DefaultPinnedPoolLimit is how many bytes a device's PinnedPool keeps cached at most, unless
// SetLimit says otherwise.
const DefaultPinnedPoolLimit uint64 = 256 << 20

// minPinnedClass is the smallest size class: smaller buffers cost the same to allocate.
const minPinnedClass uint64 = 64 << 10

// PinnedPoolStats describes a PinnedPool.
type PinnedPoolStats struct {
	CachedBytes   uint64 // bytes of idle buffers kept for reuse
	CachedBuffers int
	Limit         uint64
	Hits, Misses  uint64 // Gets served from the cache, and by a fresh allocation
}

// PinnedPool is d's pool of reusable pinned buffers, made on first use.
func (d *Device) PinnedPool() *PinnedPool {
	if p := d.pinned.Load(); p != nil {
		return p
	}
	d.pinned.CompareAndSwap(nil, &PinnedPool{dev: d, free: map[uint64][]*HostBuffer{}, limit: DefaultPinnedPoolLimit})
	return d.pinned.Load()
}

// pinnedClass is the size class of an n-byte request.
func pinnedClass(n uint64) uint64 {
	if n <= minPinnedClass {
		return minPinnedClass
	}
	if n > 1<<62 {
		return n
	}
	return 1 << bits.Len64(n-1)
}

// Get returns a pinned buffer of at least n bytes (its Size is n's size class): a cached one,
// or a new one from MallocHost. Hand it back with Put.
func (p *PinnedPool) Get(ctx context.Context, n uint64) (*HostBuffer, error) {
	if p == nil {
		return nil, Invalid("PinnedPool.Get on a nil pool")
	}
	if n == 0 {
		return nil, Invalid("PinnedPool.Get of 0 bytes")
	}
	class := pinnedClass(n)
	p.mu.Lock()
	for list := p.free[class]; len(list) > 0; list = p.free[class] {
		h := list[len(list)-1]
		p.free[class] = list[:len(list)-1]
		p.cached -= h.Size()
		if h.Closed() { // freed by the device's Close
			continue
		}
		p.hits++
		p.mu.Unlock()
		return h, nil
	}
	p.misses++
	p.mu.Unlock()
	return MallocHost(ctx, p.dev, class, 0)
}

// Put hands h back for reuse, and returns at once; when the pool already keeps its limit, h
// is freed instead, and Put returns once it is. h must come from Get on this pool and not be
// used after Put.
func (p *PinnedPool) Put(ctx context.Context, h *HostBuffer) error {
	if p == nil {
		return Invalid("PinnedPool.Put on a nil pool")
	}
	if h == nil {
		return Invalid("PinnedPool.Put of a nil buffer")
	}
	if h.Device() != p.dev {
		return WrongDevice("pinned buffer", h.Device(), p.dev)
	}
	size := h.Size()
	if h.Closed() {
		return Closed("pinned buffer of %d bytes put back after Close", size)
	}
	if pinnedClass(size) != size {
		return Invalid("a %d-byte pinned buffer is not one of the pool's (from Get)", size)
	}
	p.mu.Lock()
	for _, o := range p.free[size] {
		if o == h {
			p.mu.Unlock()
			return Closed("pinned buffer of %d bytes put back twice", size)
		}
	}
	if p.cached+size <= p.limit {
		p.free[size] = append(p.free[size], h)
		p.cached += size
		p.mu.Unlock()
		return nil
	}
	p.mu.Unlock()
	return h.Close(ctx)
}

// SetLimit sets how many bytes of idle buffers the pool keeps, freeing what is over it.
func (p *PinnedPool) SetLimit(ctx context.Context, bytes uint64) error {
	if p == nil {
		return Invalid("PinnedPool.SetLimit on a nil pool")
	}
	p.mu.Lock()
	p.limit = bytes
	p.mu.Unlock()
	return p.trim(ctx, bytes)
}

// Trim frees every idle buffer.
func (p *PinnedPool) Trim(ctx context.Context) error {
	if p == nil {
		return Invalid("PinnedPool.Trim on a nil pool")
	}
	return p.trim(ctx, 0)
}

func (p *PinnedPool) trim(ctx context.Context, keep uint64) error {
	var drop []*HostBuffer
	p.mu.Lock()
	for class, list := range p.free {
		for p.cached > keep && len(list) > 0 {
			h := list[len(list)-1]
			list = list[:len(list)-1]
			p.cached -= h.Size()
			drop = append(drop, h)
		}
		p.free[class] = list
	}
	p.mu.Unlock()
	var first error
	for _, h := range drop {
		if h.Closed() {
			continue
		}
		if err := h.Close(ctx); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Stats describes the pool now (zero for a nil pool).
func (p *PinnedPool) Stats() PinnedPoolStats {
	if p == nil {
		return PinnedPoolStats{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, l := range p.free {
		n += len(l)
	}
	return PinnedPoolStats{CachedBytes: p.cached, CachedBuffers: n, Limit: p.limit, Hits: p.hits, Misses: p.misses}
}
