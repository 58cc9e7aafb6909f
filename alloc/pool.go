package alloc

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Pool is a memory pool of one device (cudaMemPool_t): the memory MallocAsync hands out and
// takes back in stream order. Its methods are safe for concurrent use.
type Pool core.Pool

func (p *Pool) core() *core.Pool { return (*core.Pool)(p) }

// HandleType is a kind of OS handle a pool's memory may be exported as, for IPC.
type HandleType uint32

// Export handle types.
const (
	HandleNone    = HandleType(backend.HandleNone)
	HandlePosixFD = HandleType(backend.HandlePosixFileDescriptor)
	HandleFabric  = HandleType(backend.HandleFabric)
)

// PoolOption configures NewPool.
type PoolOption func(*poolConfig)

type poolConfig core.PoolConfig

// MaxSize caps the pool at bytes (CUDA 12.2 or later); an allocation past it fails with
// cudaerr.MemoryAllocation.
func MaxSize(bytes uint64) PoolOption { return func(c *poolConfig) { c.Props.MaxSize = bytes } }

// ExportAs makes the pool's memory exportable as the given handle types (for IPC).
func ExportAs(types ...HandleType) PoolOption {
	return func(c *poolConfig) {
		for _, t := range types {
			c.Props.HandleTypes |= uint32(t)
		}
	}
}

// KeepUnused sets the pool's release threshold at creation (see Pool.SetReleaseThreshold).
func KeepUnused(bytes uint64) PoolOption {
	return func(c *poolConfig) { c.Threshold, c.SetThreshold = bytes, true }
}

// KeepAll is the release threshold that never returns unused memory at a synchronization.
const KeepAll = ^uint64(0)

// NewPool creates a memory pool on d and returns once it exists. Close it with Close, or let
// the device's Close destroy it.
func NewPool(ctx context.Context, d *device.Device, opts ...PoolOption) (*Pool, error) {
	if d == nil {
		return nil, core.Invalid("NewPool on a nil device")
	}
	var c poolConfig
	for _, o := range opts {
		o(&c)
	}
	p, err := core.NewPool(ctx, coreDev(d), core.PoolConfig(c))
	return (*Pool)(p), err
}

// DefaultPool is d's default pool, which MallocAsync uses unless SetCurrentPool said otherwise.
func DefaultPool(ctx context.Context, d *device.Device) (*Pool, error) {
	if d == nil {
		return nil, core.Invalid("DefaultPool of a nil device")
	}
	p, err := core.DefaultPool(ctx, coreDev(d))
	return (*Pool)(p), err
}

// CurrentPool is the pool MallocAsync uses on d.
func CurrentPool(ctx context.Context, d *device.Device) (*Pool, error) {
	if d == nil {
		return nil, core.Invalid("CurrentPool of a nil device")
	}
	p, err := core.CurrentPool(ctx, coreDev(d))
	return (*Pool)(p), err
}

// SetCurrentPool makes p the pool MallocAsync uses on its device, and returns once it is.
func SetCurrentPool(ctx context.Context, p *Pool) error { return p.core().SetCurrent(ctx) }

// Device is the device the pool belongs to.
func (p *Pool) Device() *device.Device { return (*device.Device)(p.core().Device()) }

// IsDefault reports whether p is its device's default pool.
func (p *Pool) IsDefault() bool { return p.core().IsDefault() }

// Closed reports whether Close has run.
func (p *Pool) Closed() bool { return p.core().Closed() }

// do runs fn with the pool's handle on the actor thread, once the pool is checked alive.
func (p *Pool) do(ctx context.Context, fn func(rt backend.Device, h backend.MemPool) error) error {
	return p.core().Do(ctx, fn)
}

// Close destroys a pool NewPool made and returns once it is destroyed. Memory still
// allocated from it stays usable and is released when freed; the device's current pool
// reverts to the default one if it was p. Closing a default pool is an ErrInvalidArgument
// error, closing twice an ErrClosed one.
func (p *Pool) Close(ctx context.Context) error { return p.core().Close(ctx) }

// PoolAttributes are a pool's settings and figures.
type PoolAttributes struct {
	// ReuseFollowEventDependencies: memory freed on a stream may be reused by another stream
	// that waits on an event recorded after the free.
	ReuseFollowEventDependencies bool
	// ReuseAllowOpportunistic: memory whose free has completed on the GPU may be reused by any
	// stream.
	ReuseAllowOpportunistic bool
	// ReuseAllowInternalDependencies: the runtime may make an allocating stream wait for a
	// free on another stream in order to reuse its memory.
	ReuseAllowInternalDependencies bool
	// ReleaseThreshold is how many unused bytes the pool keeps across a synchronization.
	ReleaseThreshold uint64
	// ReservedCurrent and ReservedHigh are the device memory the pool holds, now and at most.
	ReservedCurrent, ReservedHigh uint64
	// UsedCurrent and UsedHigh are the bytes handed out and not freed, now and at most.
	UsedCurrent, UsedHigh uint64
}

// Attributes reads every attribute of the pool.
func (p *Pool) Attributes(ctx context.Context) (PoolAttributes, error) {
	var a PoolAttributes
	err := p.do(ctx, func(rt backend.Device, h backend.MemPool) error {
		var vals [9]uint64
		for attr := backend.PoolReuseFollowEventDependencies; attr <= backend.PoolUsedMemHigh; attr++ {
			v, err := rt.MemPoolGetAttribute(h, attr)
			if err != nil {
				return err
			}
			vals[attr] = v
		}
		a = PoolAttributes{
			ReuseFollowEventDependencies:   vals[backend.PoolReuseFollowEventDependencies] != 0,
			ReuseAllowOpportunistic:        vals[backend.PoolReuseAllowOpportunistic] != 0,
			ReuseAllowInternalDependencies: vals[backend.PoolReuseAllowInternalDependencies] != 0,
			ReleaseThreshold:               vals[backend.PoolReleaseThreshold],
			ReservedCurrent:                vals[backend.PoolReservedMemCurrent],
			ReservedHigh:                   vals[backend.PoolReservedMemHigh],
			UsedCurrent:                    vals[backend.PoolUsedMemCurrent],
			UsedHigh:                       vals[backend.PoolUsedMemHigh],
		}
		return nil
	})
	return a, err
}

// SetReleaseThreshold sets how many unused bytes the pool keeps across a synchronization
// (KeepAll: everything); above it, memory goes back to the device when a stream, an event or
// the device is synchronized.
func (p *Pool) SetReleaseThreshold(ctx context.Context, bytes uint64) error {
	return p.do(ctx, func(rt backend.Device, h backend.MemPool) error {
		return rt.MemPoolSetAttribute(h, backend.PoolReleaseThreshold, bytes)
	})
}

// ReusePolicy is the pool's three reuse switches (see PoolAttributes).
type ReusePolicy struct {
	FollowEventDependencies, AllowOpportunistic, AllowInternalDependencies bool
}

// SetReuse sets the pool's reuse policy.
func (p *Pool) SetReuse(ctx context.Context, r ReusePolicy) error {
	b := func(v bool) uint64 {
		if v {
			return 1
		}
		return 0
	}
	return p.do(ctx, func(rt backend.Device, h backend.MemPool) error {
		for attr, v := range map[backend.PoolAttr]bool{
			backend.PoolReuseFollowEventDependencies:   r.FollowEventDependencies,
			backend.PoolReuseAllowOpportunistic:        r.AllowOpportunistic,
			backend.PoolReuseAllowInternalDependencies: r.AllowInternalDependencies,
		} {
			if err := rt.MemPoolSetAttribute(h, attr, b(v)); err != nil {
				return err
			}
		}
		return nil
	})
}

// ResetHighWatermarks restarts ReservedHigh and UsedHigh from the current figures.
func (p *Pool) ResetHighWatermarks(ctx context.Context) error {
	return p.do(ctx, func(rt backend.Device, h backend.MemPool) error {
		if err := rt.MemPoolSetAttribute(h, backend.PoolReservedMemHigh, 0); err != nil {
			return err
		}
		return rt.MemPoolSetAttribute(h, backend.PoolUsedMemHigh, 0)
	})
}

// TrimTo returns unused memory to the device until the pool holds at most keep bytes (or has
// nothing more it can safely release: memory whose free the GPU has not yet reached stays).
func (p *Pool) TrimTo(ctx context.Context, keep uint64) error {
	return p.do(ctx, func(rt backend.Device, h backend.MemPool) error { return rt.MemPoolTrimTo(h, keep) })
}

// Access is how a device may access a pool's memory.
type Access int32

// Pool access modes.
const (
	AccessNone      = Access(backend.AccessNone)
	AccessReadWrite = Access(backend.AccessReadWrite)
)

// String names the access mode.
func (a Access) String() string {
	switch a {
	case AccessNone:
		return "none"
	case Access(backend.AccessRead):
		return "read"
	case AccessReadWrite:
		return "read-write"
	}
	return fmt.Sprintf("Access(%d)", int32(a))
}

// SetAccess lets peer (another device) access the pool's memory, or stops it (AccessNone).
// The owning device always has read-write access.
func (p *Pool) SetAccess(ctx context.Context, peer *device.Device, a Access) error {
	if peer == nil {
		return core.Invalid("SetAccess for a nil device")
	}
	if a != AccessNone && a != AccessReadWrite {
		return core.Invalid("pool access %v: only AccessNone and AccessReadWrite are possible", a)
	}
	return p.do(ctx, func(rt backend.Device, h backend.MemPool) error {
		return rt.MemPoolSetAccess(h, peer.Ordinal(), backend.AccessFlags(a))
	})
}

// Access is how peer may access the pool's memory.
func (p *Pool) Access(ctx context.Context, peer *device.Device) (Access, error) {
	if peer == nil {
		return 0, core.Invalid("Access of a nil device")
	}
	var a Access
	err := p.do(ctx, func(rt backend.Device, h backend.MemPool) error {
		f, err := rt.MemPoolGetAccess(h, peer.Ordinal())
		a = Access(f)
		return err
	})
	return a, err
}
