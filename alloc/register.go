package alloc

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Registered is Go memory page-locked with cudaHostRegister, so that copies from and to it
// run at pinned speed and async copies may use it.
//
// Lifetime rules. The registration keeps the slice referenced (and pinned with
// runtime.Pinner, should the collector ever move objects), so Go cannot free or move it while
// registered. The caller must not register memory that overlaps a registered range, must not
// let the GPU use the memory after Close, and should close the registration before dropping the
// slice: Close, or the device's Close, ends the registration. Registering a slice keeps
// its whole backing array alive, not only the elements named.
type Registered[T any] struct {
	dev    *device.Device
	data   []T
	p      unsafe.Pointer
	bytes  uint64
	pinner runtime.Pinner
	done   atomic.Bool
}

// RegisterFlag is a cudaHostRegister flag.
type RegisterFlag uint32

// Registration flags.
const (
	RegisterPortable = RegisterFlag(backend.HostRegisterPortable) // pinned for every device
	RegisterMapped   = RegisterFlag(backend.HostRegisterMapped)   // addressable by the device
	RegisterReadOnly = RegisterFlag(backend.HostRegisterReadOnly) // the device only reads it
)

// Register page-locks data for d, and returns once it is registered. End the registration
// with Close.
func Register[T any](ctx context.Context, d *device.Device, data []T, flags ...RegisterFlag) (*Registered[T], error) {
	if d == nil {
		return nil, core.Invalid("Register on a nil device")
	}
	size, err := elemSize[T]()
	if err != nil {
		return nil, err
	}
	bytes, err := byteCount("Register", len(data), size)
	if err != nil {
		return nil, err
	}
	var f uint32
	for _, fl := range flags {
		f |= uint32(fl)
	}
	r := &Registered[T]{dev: d, data: data, p: unsafe.Pointer(unsafe.SliceData(data)), bytes: bytes}
	cd := coreDev(d)
	reg, err := core.Make(ctx, cd, func(rt backend.Device, tr *core.Tracker) (*Registered[T], error) {
		if err := cd.Charge(core.KindRegistered, bytes); err != nil {
			return nil, err
		}
		r.pinner.Pin(r.p) // pinned while registered; unregister unpins it
		if err := rt.HostRegister(r.p, bytes, f); err != nil {
			r.pinner.Unpin()
			cd.Refund(core.KindRegistered, bytes)
			return nil, fmt.Errorf("gpuactor/alloc: registering %d bytes for device %d: %w", bytes, d.Ordinal(), err)
		}
		tr.Own(r, func() error { return r.unregister(rt) })
		return r, nil
	}, func(rt backend.Device, tr *core.Tracker, r *Registered[T]) {
		tr.Disown(r)
		_ = r.unregister(rt) // unpins too
	})
	if err != nil {
		return nil, err
	}
	return reg, nil
}

// Host is the registered memory, or nil once the registration ended.
func (r *Registered[T]) Host() []T {
	if r == nil || r.done.Load() {
		return nil
	}
	return r.data
}

// Size is the registered length in bytes (0 for a nil registration).
func (r *Registered[T]) Size() uint64 {
	if r == nil {
		return 0
	}
	return r.bytes
}

// Len is the number of elements registered (0 for a nil registration).
func (r *Registered[T]) Len() int {
	if r == nil {
		return 0
	}
	return len(r.data)
}

// Close ends the registration once the GPU has passed the work queued so far on every stream
// of the device (it may still be copying the memory), and returns once it has ended; the
// device's other work goes on meanwhile. Host is nil from Close on. Closing twice is a
// device.ErrClosed error.
func (r *Registered[T]) Close(ctx context.Context) error {
	if r == nil {
		return core.Invalid("Close of a nil registration")
	}
	return core.RunTracked(ctx, coreDev(r.dev), func(rt backend.Device, tr *core.Tracker, done func(error)) error {
		if r.done.Load() {
			return core.Closed("memory unregistered twice")
		}
		r.done.Store(true)
		tr.Disown(r)
		tr.AfterAll(func(err error) {
			if err == nil {
				err = r.unregister(rt)
			}
			done(err)
		})
		return nil
	}).Wait(ctx)
}

// unregister ends the registration; on the actor thread, once no queued work uses the memory.
func (r *Registered[T]) unregister(rt backend.Device) error {
	r.done.Store(true)
	err := rt.HostUnregister(r.p)
	coreDev(r.dev).Refund(core.KindRegistered, r.bytes)
	r.pinner.Unpin()
	return err
}

// DevicePtr is the address kernels use for the memory (registered with RegisterMapped); it
// returns once the device's actor has asked the runtime. Once the registration ended it is a
// device.ErrClosed error.
func (r *Registered[T]) DevicePtr(ctx context.Context) (cuda.DevicePtr, error) {
	if r == nil {
		return 0, core.Invalid("DevicePtr of a nil registration")
	}
	return core.HostDevicePtr(ctx, coreDev(r.dev), r.p, func() error {
		if r.done.Load() {
			return core.Closed("DevicePtr of unregistered memory")
		}
		return nil
	})
}
