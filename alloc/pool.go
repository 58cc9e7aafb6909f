package alloc

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Pool is a memory pool of one device (cudaMemPool_t): the memory MallocAsync hands out and
// takes back in stream order. Its methods are safe for concurrent use.
type Pool struct {
	dev       *device.Device
	h         backend.MemPool
	isDefault bool
	closed    atomic.Bool
}

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

type poolConfig struct {
	props        backend.PoolProps
	threshold    uint64
	hasThreshold bool
}

// MaxSize caps the pool at bytes (CUDA 12.2 or later); an allocation past it fails with
// cudaerr.MemoryAllocation.
func MaxSize(bytes uint64) PoolOption { return func(c *poolConfig) { c.props.MaxSize = bytes } }

// ExportAs makes the pool's memory exportable as the given handle types (for IPC).
func ExportAs(types ...HandleType) PoolOption {
	return func(c *poolConfig) {
		for _, t := range types {
			c.props.HandleTypes |= uint32(t)
		}
	}
}

// KeepUnused sets the pool's release threshold at creation (see Pool.SetReleaseThreshold).
func KeepUnused(bytes uint64) PoolOption {
	return func(c *poolConfig) { c.threshold, c.hasThreshold = bytes, true }
}

// KeepAll is the release threshold that never returns unused memory at a synchronization.
const KeepAll = ^uint64(0)

// pools is a device's registry of the pools alloc knows, so that CurrentPool returns the
// *Pool that NewPool made. Its map is touched on the actor thread only.
type pools struct {
	byHandle map[backend.MemPool]*Pool
}

type poolsKey struct{}

func registry(d *device.Device) *pools {
	return coreDev(d).Ext(poolsKey{}, func() any { return &pools{byHandle: map[backend.MemPool]*Pool{}} }).(*pools)
}

// lookup returns the registered *Pool of h, registering a wrapper for a pool alloc did not
// make (the default pool, or one set by other code).
func lookup(d *device.Device, rt backend.Device, h backend.MemPool) (*Pool, error) {
	reg := registry(d)
	if p := reg.byHandle[h]; p != nil {
		return p, nil
	}
	def, err := rt.DefaultMemPool()
	if err != nil {
		return nil, err
	}
	p := &Pool{dev: d, h: h, isDefault: h == def}
	reg.byHandle[h] = p
	return p, nil
}

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
	c.props.Location = backend.Location{Type: backend.LocationDevice, ID: int32(d.Ordinal())}
	return core.Make(ctx, coreDev(d), func(rt backend.Device, tr *core.Tracker) (*Pool, error) {
		h, err := rt.MemPoolCreate(c.props)
		if err != nil {
			return nil, fmt.Errorf("gpuactor/alloc: creating a pool on device %d: %w", d.Ordinal(), err)
		}
		p := &Pool{dev: d, h: h}
		if c.hasThreshold {
			if err := rt.MemPoolSetAttribute(h, backend.PoolReleaseThreshold, c.threshold); err != nil {
				return nil, errors.Join(err, rt.MemPoolDestroy(h))
			}
		}
		registry(d).byHandle[h] = p
		tr.Own(p, func() error { return p.destroy(rt) })
		return p, nil
	}, func(rt backend.Device, tr *core.Tracker, p *Pool) {
		tr.Disown(p)
		_ = p.destroy(rt)
	})
}

// DefaultPool is d's default pool, which MallocAsync uses unless SetCurrentPool said otherwise.
func DefaultPool(ctx context.Context, d *device.Device) (*Pool, error) {
	if d == nil {
		return nil, core.Invalid("DefaultPool of a nil device")
	}
	return core.Run(ctx, coreDev(d), func(rt backend.Device, _ *core.Tracker) (*Pool, error) {
		h, err := rt.DefaultMemPool()
		if err != nil {
			return nil, err
		}
		return lookup(d, rt, h)
	}).Await(ctx)
}

// CurrentPool is the pool MallocAsync uses on d.
func CurrentPool(ctx context.Context, d *device.Device) (*Pool, error) {
	if d == nil {
		return nil, core.Invalid("CurrentPool of a nil device")
	}
	return core.Run(ctx, coreDev(d), func(rt backend.Device, _ *core.Tracker) (*Pool, error) {
		h, err := rt.CurrentMemPool()
		if err != nil {
			return nil, err
		}
		return lookup(d, rt, h)
	}).Await(ctx)
}

// SetCurrentPool makes p the pool MallocAsync uses on its device.
func SetCurrentPool(ctx context.Context, p *Pool) error {
	return p.do(ctx, func(rt backend.Device) error { return rt.SetCurrentMemPool(p.h) })
}

// Device is the device the pool belongs to.
func (p *Pool) Device() *device.Device { return p.dev }

// IsDefault reports whether p is its device's default pool.
func (p *Pool) IsDefault() bool { return p.isDefault }

// Closed reports whether Close has run.
func (p *Pool) Closed() bool { return p.closed.Load() }

// alive is the pool's state check, on the actor thread.
func (p *Pool) alive() error {
	if p == nil {
		return core.Invalid("nil pool")
	}
	if p.closed.Load() {
		return core.Closed("pool used after Close")
	}
	return nil
}

func (p *Pool) do(ctx context.Context, fn func(rt backend.Device) error) error {
	if p == nil {
		return core.Invalid("nil pool")
	}
	return core.Do(ctx, coreDev(p.dev), func(rt backend.Device, _ *core.Tracker) error {
		if err := p.alive(); err != nil {
			return err
		}
		return fn(rt)
	})
}

// Close destroys a pool NewPool made and returns once it is destroyed. Memory still
// allocated from it stays usable and is released when freed; the device's current pool
// reverts to the default one if it was p. Closing a default pool is an ErrInvalidArgument
// error, closing twice an ErrClosed one.
func (p *Pool) Close(ctx context.Context) error {
	if p == nil {
		return core.Invalid("Close of a nil pool")
	}
	if p.isDefault {
		return core.Invalid("the default pool of device %d cannot be destroyed", p.dev.Ordinal())
	}
	return core.Do(ctx, coreDev(p.dev), func(rt backend.Device, tr *core.Tracker) error {
		if err := p.alive(); err != nil {
			return err
		}
		tr.Disown(p)
		return p.destroy(rt)
	})
}

// destroy runs on the actor thread.
func (p *Pool) destroy(rt backend.Device) error {
	p.closed.Store(true)
	delete(registry(p.dev).byHandle, p.h)
	if cur, err := rt.CurrentMemPool(); err == nil && cur == p.h {
		if def, err := rt.DefaultMemPool(); err == nil {
			_ = rt.SetCurrentMemPool(def) // the runtime does this too; the simulator may not have to
		}
	}
	return rt.MemPoolDestroy(p.h)
}

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
	err := p.do(ctx, func(rt backend.Device) error {
		var vals [9]uint64
		for attr := backend.PoolReuseFollowEventDependencies; attr <= backend.PoolUsedMemHigh; attr++ {
			v, err := rt.MemPoolGetAttribute(p.h, attr)
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
	return p.do(ctx, func(rt backend.Device) error {
		return rt.MemPoolSetAttribute(p.h, backend.PoolReleaseThreshold, bytes)
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
	return p.do(ctx, func(rt backend.Device) error {
		for attr, v := range map[backend.PoolAttr]bool{
			backend.PoolReuseFollowEventDependencies:   r.FollowEventDependencies,
			backend.PoolReuseAllowOpportunistic:        r.AllowOpportunistic,
			backend.PoolReuseAllowInternalDependencies: r.AllowInternalDependencies,
		} {
			if err := rt.MemPoolSetAttribute(p.h, attr, b(v)); err != nil {
				return err
			}
		}
		return nil
	})
}

// ResetHighWatermarks restarts ReservedHigh and UsedHigh from the current figures.
func (p *Pool) ResetHighWatermarks(ctx context.Context) error {
	return p.do(ctx, func(rt backend.Device) error {
		if err := rt.MemPoolSetAttribute(p.h, backend.PoolReservedMemHigh, 0); err != nil {
			return err
		}
		return rt.MemPoolSetAttribute(p.h, backend.PoolUsedMemHigh, 0)
	})
}

// TrimTo returns unused memory to the device until the pool holds at most keep bytes (or has
// nothing more it can safely release: memory whose free the GPU has not yet reached stays).
func (p *Pool) TrimTo(ctx context.Context, keep uint64) error {
	return p.do(ctx, func(rt backend.Device) error { return rt.MemPoolTrimTo(p.h, keep) })
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
	return p.do(ctx, func(rt backend.Device) error {
		return rt.MemPoolSetAccess(p.h, peer.Ordinal(), backend.AccessFlags(a))
	})
}

// Access is how peer may access the pool's memory.
func (p *Pool) Access(ctx context.Context, peer *device.Device) (Access, error) {
	if peer == nil {
		return 0, core.Invalid("Access of a nil device")
	}
	var a Access
	err := p.do(ctx, func(rt backend.Device) error {
		f, err := rt.MemPoolGetAccess(p.h, peer.Ordinal())
		a = Access(f)
		return err
	})
	return a, err
}
