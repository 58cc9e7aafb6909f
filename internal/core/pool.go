package core

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// Pool is a stream-ordered memory pool of one device (cudaMemPool_t): the state alloc.Pool
// is a face over, here so that an allocation never calls back up into alloc
// (docs/design/memory.md). Its handle is read on the actor thread only, where Close runs.
type Pool struct {
	dev       *Device
	h         backend.MemPool
	isDefault bool
	closed    atomic.Bool
}

// PoolConfig is how NewPool makes a pool: its properties (the location is set to the
// device) and, when SetThreshold, its release threshold.
type PoolConfig struct {
	Props        backend.PoolProps
	Threshold    uint64
	SetThreshold bool
}

// pool returns the Pool of h, registering one for a pool NewPool did not make (the default
// pool, or one another library set current), so that each handle has one Pool. Actor thread
// only.
func (d *Device) pool(rt backend.Device, h backend.MemPool) (*Pool, error) {
	if p := d.pools[h]; p != nil {
		return p, nil
	}
	def, err := rt.DefaultMemPool()
	if err != nil {
		return nil, err
	}
	p := &Pool{dev: d, h: h, isDefault: h == def}
	d.addPool(p)
	return p, nil
}

func (d *Device) addPool(p *Pool) {
	if d.pools == nil {
		d.pools = map[backend.MemPool]*Pool{}
	}
	d.pools[p.h] = p
}

// NewPool creates a memory pool on d and returns once it exists; the device's Close
// destroys it unless Close did.
func NewPool(ctx context.Context, d *Device, cfg PoolConfig) (*Pool, error) {
	cfg.Props.Location = backend.Location{Type: backend.LocationDevice, ID: int32(d.ordinal)}
	return Make(ctx, d, func(rt backend.Device, tr *Tracker) (*Pool, error) {
		h, err := rt.MemPoolCreate(cfg.Props)
		if err != nil {
			return nil, fmt.Errorf("gpuactor: creating a pool on device %d: %w", d.ordinal, err)
		}
		p := &Pool{dev: d, h: h}
		if cfg.SetThreshold {
			if err := rt.MemPoolSetAttribute(h, backend.PoolReleaseThreshold, cfg.Threshold); err != nil {
				return nil, errors.Join(err, rt.MemPoolDestroy(h))
			}
		}
		d.addPool(p)
		tr.Own(p, func() error { return p.destroy(rt) })
		return p, nil
	}, func(rt backend.Device, tr *Tracker, p *Pool) {
		tr.Disown(p)
		_ = p.destroy(rt)
	})
}

// DefaultPool is d's default pool.
func DefaultPool(ctx context.Context, d *Device) (*Pool, error) {
	return Run(ctx, d, func(rt backend.Device, _ *Tracker) (*Pool, error) {
		h, err := rt.DefaultMemPool()
		if err != nil {
			return nil, err
		}
		return d.pool(rt, h)
	}).Await(ctx)
}

// CurrentPool is the pool a stream-ordered allocation without a pool of its own uses on d.
func CurrentPool(ctx context.Context, d *Device) (*Pool, error) {
	return Run(ctx, d, func(rt backend.Device, _ *Tracker) (*Pool, error) {
		h, err := rt.CurrentMemPool()
		if err != nil {
			return nil, err
		}
		return d.pool(rt, h)
	}).Await(ctx)
}

// SetCurrent makes p the pool its device's stream-ordered allocations use, and returns once
// it is.
func (p *Pool) SetCurrent(ctx context.Context) error {
	return p.Do(ctx, func(rt backend.Device, h backend.MemPool) error { return rt.SetCurrentMemPool(h) })
}

// Device is the device the pool belongs to.
func (p *Pool) Device() *Device {
	if p == nil {
		return nil
	}
	return p.dev
}

// IsDefault reports whether p is its device's default pool.
func (p *Pool) IsDefault() bool { return p != nil && p.isDefault }

// Closed reports whether Close has run; a nil pool counts as closed.
func (p *Pool) Closed() bool { return p == nil || p.closed.Load() }

// Alive is nil while p may be used: an ErrInvalidArgument error for a nil pool, an ErrClosed
// one after Close. Close runs on the actor thread, so the answer there holds for the message.
func (p *Pool) Alive() error {
	if p == nil {
		return Invalid("nil pool")
	}
	if p.closed.Load() {
		return Closed("pool used after Close")
	}
	return nil
}

// Do runs fn with the pool's handle on its device's actor thread, once the pool is checked
// alive there, and returns its error.
func (p *Pool) Do(ctx context.Context, fn func(rt backend.Device, h backend.MemPool) error) error {
	if p == nil {
		return Invalid("nil pool")
	}
	return Do(ctx, p.dev, func(rt backend.Device, _ *Tracker) error {
		if err := p.Alive(); err != nil {
			return err
		}
		return fn(rt, p.h)
	})
}

// Close destroys a pool NewPool made and returns once it is destroyed. Memory still
// allocated from it stays usable and is released when freed; the device's current pool
// reverts to the default one if it was p. Closing a default pool is an ErrInvalidArgument
// error, closing twice an ErrClosed one.
func (p *Pool) Close(ctx context.Context) error {
	if p == nil {
		return Invalid("Close of a nil pool")
	}
	if p.isDefault {
		return Invalid("the default pool of device %d cannot be destroyed", p.dev.ordinal)
	}
	return Do(ctx, p.dev, func(rt backend.Device, tr *Tracker) error {
		if err := p.Alive(); err != nil {
			return err
		}
		tr.Disown(p)
		return p.destroy(rt)
	})
}

// destroy runs on the actor thread.
func (p *Pool) destroy(rt backend.Device) error {
	p.closed.Store(true)
	delete(p.dev.pools, p.h)
	if cur, err := rt.CurrentMemPool(); err == nil && cur == p.h {
		if def, err := rt.DefaultMemPool(); err == nil {
			_ = rt.SetCurrentMemPool(def) // the runtime does this too; the simulator may not have to
		}
	}
	return rt.MemPoolDestroy(p.h)
}
