package alloc

import (
	"context"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/core"
)

// PinnedPool keeps pinned host buffers for reuse, because cudaHostAlloc and cudaFreeHost cost
// hundreds of microseconds to milliseconds (they map pages for DMA) while copies that use the
// buffers cost a few. Buffers come in power-of-two size classes from 64 KiB. Each device has
// one (PinnedPoolOf), for callers that stage their own copies (GetPinned). The staging rings
// of streams' Go-slice copies and graphs' staged copy nodes pin their own memory, on the actor
// thread, where the pool's Put (which may free) cannot run. Safe for concurrent use.
type PinnedPool core.PinnedPool

func (p *PinnedPool) core() *core.PinnedPool { return (*core.PinnedPool)(p) }

// DefaultPinnedPoolLimit is how many bytes a device's PinnedPool keeps cached at most, unless
// SetLimit says otherwise.
const DefaultPinnedPoolLimit uint64 = core.DefaultPinnedPoolLimit

// PinnedPoolStats describes a PinnedPool.
type PinnedPoolStats struct {
	CachedBytes   uint64 // bytes of idle buffers kept for reuse
	CachedBuffers int
	Limit         uint64
	Hits, Misses  uint64 // Gets served from the cache, and by a fresh allocation
}

// PinnedPoolOf is d's pool of reusable pinned buffers, made on first use.
func PinnedPoolOf(d *device.Device) *PinnedPool {
	return (*PinnedPool)(coreDev(d).PinnedPool())
}

// Get returns a pinned buffer of at least n bytes (its Size is n's size class): a cached one,
// or a new one from device.Device.MallocPinnedBytes. Hand it back with Put.
func (p *PinnedPool) Get(ctx context.Context, n uint64) (*device.HostBuffer, error) {
	h, err := p.core().Get(ctx, n)
	return (*device.HostBuffer)(h), err
}

// Put hands h back for reuse, and returns at once; when the pool already keeps its limit, h
// is freed instead, and Put returns once it is. h must come from Get on this pool and not be
// used after Put.
func (p *PinnedPool) Put(ctx context.Context, h *device.HostBuffer) error {
	return p.core().Put(ctx, (*core.HostBuffer)(h))
}

// SetLimit sets how many bytes of idle buffers the pool keeps, freeing what is over it.
func (p *PinnedPool) SetLimit(ctx context.Context, bytes uint64) error {
	return p.core().SetLimit(ctx, bytes)
}

// Trim frees every idle buffer.
func (p *PinnedPool) Trim(ctx context.Context) error { return p.core().Trim(ctx) }

// Stats describes the pool now.
func (p *PinnedPool) Stats() PinnedPoolStats { return PinnedPoolStats(p.core().Stats()) }
