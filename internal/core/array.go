package core

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Array is a CUDA array of one device: the state behind alloc.Array, reachable by the other
// public packages (textures and surfaces bind it) through Handle.
type Array struct {
	dev    *Device
	h      backend.Array
	info   backend.ArrayInfo
	mip    *MipmappedArray // the mipmapped array this is a level of, which owns it; or nil
	lent   string          // what lends the array (lentarray.go), which frees it; or ""
	closed atomic.Bool
}

// NewArray allocates an array of format and extent with flags on d (cudaMallocArray for
// plain 1D and 2D arrays, cudaMalloc3DArray for the others) and returns once it is made.
func NewArray(ctx context.Context, d *Device, f cuda.ChannelFormat, e backend.Extent3D, flags uint32) (*Array, error) {
	if d == nil {
		return nil, Invalid("NewArray on a nil device")
	}
	if err := f.Validate(); err != nil {
		return nil, Invalid("NewArray: %v", err)
	}
	return Make(ctx, d, func(rt backend.Device, _ *Tracker) (*Array, error) {
		var h backend.Array
		var err error
		if e.Depth == 0 && flags&(backend.ArrayLayered|backend.ArrayCubemap) == 0 {
			h, err = rt.MallocArray(f, e.Width, e.Height, flags)
		} else {
			h, err = rt.Malloc3DArray(f, e, flags)
		}
		if err != nil {
			return nil, fmt.Errorf("gpuactor: array of %d×%d×%d %s with flags %#x on device %d: %w", e.Width, e.Height, e.Depth, f, flags, d.ordinal, err)
		}
		return &Array{dev: d, h: h, info: backend.ArrayInfo{Format: f, Extent: e, Flags: flags}}, nil
	}, func(rt backend.Device, _ *Tracker, a *Array) { _ = rt.FreeArray(a.h) })
}

// Device is the device the array lives on.
func (a *Array) Device() *Device { return a.dev }

// Info is the array's format, extent and flags, as it was made.
func (a *Array) Info() backend.ArrayInfo { return a.info }

// Closed reports whether the array (or the mipmapped array it is a level of) was freed.
func (a *Array) Closed() bool {
	return a.closed.Load() || a.mip != nil && a.mip.closed.Load()
}

// Handle is the array's handle for work on device d; what names the array in errors. It
// refuses a freed array (ErrClosed) and one of another device (ErrWrongDevice); on the actor
// thread, where frees happen, it is authoritative.
func (a *Array) Handle(what string, d *Device) (backend.Array, error) {
	if a == nil || a.dev == nil {
		return 0, Invalid("%s is a nil array", what)
	}
	if a.Closed() {
		return 0, fmt.Errorf("%w: %s is a freed array", ErrClosed, what)
	}
	if d != nil && a.dev != d {
		return 0, WrongDevice(what, a.dev, d)
	}
	return a.h, nil
}

// Query runs fn with the array's handle on the actor thread and returns its answer.
func Query[T any](ctx context.Context, a *Array, what string, fn func(rt backend.Device, h backend.Array) (T, error)) (T, error) {
	if a == nil || a.dev == nil {
		var zero T
		return zero, Invalid("%s of a nil array", what)
	}
	return Run(ctx, a.dev, func(rt backend.Device, _ *Tracker) (T, error) {
		h, err := a.Handle(what, a.dev)
		if err != nil {
			var zero T
			return zero, err
		}
		return fn(rt, h)
	}).Await(ctx)
}

// Close frees the array once the work queued on its device so far has finished, and returns
// once it is freed. A level of a mipmapped array is freed with it: closing one is an
// ErrInvalidArgument error; closing twice is ErrClosed.
func (a *Array) Close(ctx context.Context) error {
	if a == nil || a.dev == nil {
		return Invalid("Close of a nil array")
	}
	if a.mip != nil {
		return Invalid("Close of a mipmap level: it is freed with its mipmapped array")
	}
	if a.lent != "" {
		return Invalid("Close of an array %s lends: it is given back with it", a.lent)
	}
	d := a.dev
	return RunTracked(ctx, d, func(_ backend.Device, tr *Tracker, done func(error)) error {
		if !a.closed.CompareAndSwap(false, true) {
			return fmt.Errorf("%w: the array was freed already", ErrClosed)
		}
		// Freed even after a failed stream: the array is the caller's no more either way.
		tr.AfterAll(func(error) { done(d.rt.FreeArray(a.h)) })
		return nil
	}).Wait(ctx)
}

// MipmappedArray is a mipmapped array of one device: the state behind
// alloc.MipmappedArray.
type MipmappedArray struct {
	dev    *Device
	h      backend.MipmappedArray
	info   backend.ArrayInfo // level 0's
	levels []*Array          // made on first use; on the actor thread
	lent   string            // what lends the mipmapped array (lentarray.go); or ""
	closed atomic.Bool
	freed  func() // run on the actor thread once it is freed, for what made it; or nil
}

// NewMipmappedArray allocates levels levels of format with level 0 of extent e on d
// (cudaMallocMipmappedArray; the count clamped as MipLevels says) and returns once they are
// made.
func NewMipmappedArray(ctx context.Context, d *Device, f cuda.ChannelFormat, e backend.Extent3D, levels, flags uint32) (*MipmappedArray, error) {
	if d == nil {
		return nil, Invalid("NewMipmappedArray on a nil device")
	}
	if err := f.Validate(); err != nil {
		return nil, Invalid("NewMipmappedArray: %v", err)
	}
	return Make(ctx, d, func(rt backend.Device, _ *Tracker) (*MipmappedArray, error) {
		h, err := rt.MallocMipmappedArray(f, e, levels, flags)
		if err != nil {
			return nil, fmt.Errorf("gpuactor: mipmapped array of %d levels of %d×%d×%d %s on device %d: %w", levels, e.Width, e.Height, e.Depth, f, d.ordinal, err)
		}
		n := MipLevels(e, flags, levels)
		return &MipmappedArray{dev: d, h: h, info: backend.ArrayInfo{Format: f, Extent: e, Flags: flags}, levels: make([]*Array, n)}, nil
	}, func(rt backend.Device, _ *Tracker, m *MipmappedArray) { _ = rt.FreeMipmappedArray(m.h) })
}

// Device is the device the mipmapped array lives on.
func (m *MipmappedArray) Device() *Device { return m.dev }

// Info is level 0's format and extent and the flags, as it was made.
func (m *MipmappedArray) Info() backend.ArrayInfo { return m.info }

// Levels is the number of levels.
func (m *MipmappedArray) Levels() int { return len(m.levels) }

// Handle is the mipmapped array's handle for work on device d, as Array.Handle.
func (m *MipmappedArray) Handle(what string, d *Device) (backend.MipmappedArray, error) {
	if m == nil || m.dev == nil {
		return 0, Invalid("%s is a nil mipmapped array", what)
	}
	if m.closed.Load() {
		return 0, fmt.Errorf("%w: %s is a freed mipmapped array", ErrClosed, what)
	}
	if d != nil && m.dev != d {
		return 0, WrongDevice(what, m.dev, d)
	}
	return m.h, nil
}

// Level is level i, an Array that lives as long as m (cudaGetMipmappedArrayLevel); the same
// *Array each time.
func (m *MipmappedArray) Level(ctx context.Context, i int) (*Array, error) {
	if m == nil || m.dev == nil {
		return nil, Invalid("Level of a nil mipmapped array")
	}
	if i < 0 || i >= len(m.levels) {
		return nil, fmt.Errorf("%w: level %d of a mipmapped array of %d levels", ErrOutOfRange, i, len(m.levels))
	}
	return Run(ctx, m.dev, func(rt backend.Device, _ *Tracker) (*Array, error) {
		h, err := m.Handle("mipmapped array", m.dev)
		if err != nil {
			return nil, err
		}
		if l := m.levels[i]; l != nil {
			return l, nil
		}
		lh, err := rt.MipmappedArrayLevel(h, uint32(i))
		if err != nil {
			return nil, fmt.Errorf("gpuactor: level %d of a mipmapped array on device %d: %w", i, m.dev.ordinal, err)
		}
		info, err := rt.ArrayInfo(lh)
		if err != nil {
			return nil, fmt.Errorf("gpuactor: level %d of a mipmapped array on device %d: %w", i, m.dev.ordinal, err)
		}
		l := &Array{dev: m.dev, h: lh, info: info, mip: m}
		m.levels[i] = l
		return l, nil
	}).Await(ctx)
}

// QueryMipmapped runs fn with m's handle on the actor thread and returns its answer.
func QueryMipmapped[T any](ctx context.Context, m *MipmappedArray, what string, fn func(rt backend.Device, h backend.MipmappedArray) (T, error)) (T, error) {
	if m == nil || m.dev == nil {
		var zero T
		return zero, Invalid("%s of a nil mipmapped array", what)
	}
	return Run(ctx, m.dev, func(rt backend.Device, _ *Tracker) (T, error) {
		h, err := m.Handle(what, m.dev)
		if err != nil {
			var zero T
			return zero, err
		}
		return fn(rt, h)
	}).Await(ctx)
}

// Close frees the mipmapped array and its levels once the work queued on its device so far
// has finished, and returns once they are freed. Closing twice is ErrClosed.
func (m *MipmappedArray) Close(ctx context.Context) error {
	if m == nil || m.dev == nil {
		return Invalid("Close of a nil mipmapped array")
	}
	if m.lent != "" {
		return Invalid("Close of a mipmapped array %s lends: it is given back with it", m.lent)
	}
	d := m.dev
	return RunTracked(ctx, d, func(_ backend.Device, tr *Tracker, done func(error)) error {
		if !m.closed.CompareAndSwap(false, true) {
			return fmt.Errorf("%w: the mipmapped array was freed already", ErrClosed)
		}
		// Freed even after a failed stream: the array is the caller's no more either way.
		tr.AfterAll(func(error) { done(m.free(d.rt)) })
		return nil
	}).Wait(ctx)
}

// AdoptMipmappedArray makes a MipmappedArray of d over h, of levels levels described by
// info, which the caller made other than by NewMipmappedArray (a mapping of imported
// memory): its Close frees it as any other's does, then runs freed. Actor thread only.
func (d *Device) AdoptMipmappedArray(h backend.MipmappedArray, info backend.ArrayInfo, levels int, freed func()) *MipmappedArray {
	return &MipmappedArray{dev: d, h: h, info: info, levels: make([]*Array, max(levels, 1)), freed: freed}
}

// FreeNow frees m at once, unless it was closed already: for what made it, when that goes
// away first. Later uses are ErrClosed errors. Actor thread only.
func (m *MipmappedArray) FreeNow() error {
	if !m.closed.CompareAndSwap(false, true) {
		return nil
	}
	return m.free(m.dev.rt)
}

// free frees m and tells what made it. Actor thread only.
func (m *MipmappedArray) free(rt backend.Device) error {
	err := rt.FreeMipmappedArray(m.h)
	if m.freed != nil {
		m.freed()
	}
	return err
}
