package core

import (
	"context"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// HostBuffer is page-locked (pinned) host memory: the state device.HostBuffer is a face over.
type HostBuffer struct {
	dev    *Device
	p      unsafe.Pointer
	size   uint64
	closed atomic.Bool
}

// MallocHost allocates size bytes of pinned host memory with cudaHostAlloc flags.
func MallocHost(ctx context.Context, d *Device, size uint64, flags uint32) (*HostBuffer, error) {
	if size == 0 {
		return nil, Invalid("MallocHost of 0 bytes")
	}
	return Make(ctx, d, func(rt backend.Device, _ *Tracker) (*HostBuffer, error) {
		if err := d.Charge(KindPinned, size); err != nil {
			return nil, err
		}
		p, err := rt.HostAlloc(size, flags)
		if err != nil {
			d.Refund(KindPinned, size)
			return nil, fmt.Errorf("gpuactor: MallocHost(%d bytes): %w", size, err)
		}
		h := &HostBuffer{dev: d, p: p, size: size}
		d.live.hosts[h] = struct{}{}
		return h, nil
	}, func(_ backend.Device, _ *Tracker, h *HostBuffer) { _ = d.freeHost(h) })
}

// Host is the buffer's memory, or nil once closed.
func (h *HostBuffer) Host() []byte {
	if h == nil || h.closed.Load() {
		return nil
	}
	return unsafe.Slice((*byte)(h.p), h.size)
}

// Size is the buffer's length in bytes (0 for a nil buffer).
func (h *HostBuffer) Size() uint64 {
	if h == nil {
		return 0
	}
	return h.size
}

// DevicePtr is the address kernels on the buffer's device use for its memory (allocated
// mapped), asked of the runtime on the actor thread; it returns once known.
func (h *HostBuffer) DevicePtr(ctx context.Context) (cuda.DevicePtr, error) {
	if h == nil {
		return 0, Invalid("DevicePtr of a nil pinned buffer")
	}
	return Run(ctx, h.dev, func(rt backend.Device, _ *Tracker) (cuda.DevicePtr, error) {
		if h.closed.Load() { // Close runs on this thread: the memory stays until this returns
			return 0, Closed("DevicePtr of a pinned buffer after Close")
		}
		return rt.HostDevicePointer(h.p)
	}).Await(ctx)
}

// HostDevicePtr is the address kernels on d use for host memory at p (registered mapped),
// asked of the runtime on the actor thread, where alive says whether the memory is still
// registered; it returns once known.
func HostDevicePtr(ctx context.Context, d *Device, p unsafe.Pointer, alive func() error) (cuda.DevicePtr, error) {
	return Run(ctx, d, func(rt backend.Device, _ *Tracker) (cuda.DevicePtr, error) {
		if err := alive(); err != nil {
			return 0, err
		}
		return rt.HostDevicePointer(p)
	}).Await(ctx)
}

// Device is the device the buffer was pinned for (nil for a nil buffer).
func (h *HostBuffer) Device() *Device {
	if h == nil {
		return nil
	}
	return h.dev
}

// Closed reports whether the buffer was freed; a nil buffer, which holds nothing, counts as
// closed.
func (h *HostBuffer) Closed() bool { return h == nil || h.closed.Load() }

// Close frees the pinned memory once the GPU has passed the work queued so far on every stream
// of the device (a copy may still read or write it), and returns once it is freed; the
// device's other work goes on meanwhile. Host is nil from Close on. Closing twice is an
// ErrClosed error.
func (h *HostBuffer) Close(ctx context.Context) error {
	if h == nil {
		return Invalid("Close of a nil host buffer")
	}
	d := h.dev
	return RunTracked(ctx, d, func(_ backend.Device, tr *Tracker, done func(error)) error {
		if err := d.retireHost(h); err != nil {
			return err
		}
		tr.AfterAll(func(err error) {
			if err == nil {
				err = d.releaseHost(h)
			}
			done(err)
		})
		return nil
	}).Wait(ctx)
}

// retireHost refuses every later use of h; on the actor thread.
func (d *Device) retireHost(h *HostBuffer) error {
	if h.closed.Load() {
		return Closed("host buffer of %d bytes closed twice", h.size)
	}
	h.closed.Store(true)
	delete(d.live.hosts, h)
	return nil
}

// releaseHost frees h's memory and gives its charge back; on the actor thread.
func (d *Device) releaseHost(h *HostBuffer) error {
	d.Refund(KindPinned, h.size)
	return d.rt.HostFree(h.p)
}

// freeHost frees h at once: when the device closes, once every stream has drained.
func (d *Device) freeHost(h *HostBuffer) error {
	if err := d.retireHost(h); err != nil {
		return err
	}
	return d.releaseHost(h)
}

// ResolveHost checks that pinned buffer h belongs to d, is live and holds n bytes, and returns
// its address; what names it in errors. Actor thread.
func (d *Device) ResolveHost(what string, h *HostBuffer, n uint64) (unsafe.Pointer, error) {
	if h == nil {
		return nil, Invalid("%s is a nil host buffer", what)
	}
	if h.dev != d {
		return nil, WrongDevice(what+" (host buffer)", h.dev, d)
	}
	if h.closed.Load() {
		return nil, Closed("%s: host buffer used after Close", what)
	}
	if n > h.size {
		return nil, OutOfRange("copy of %d bytes with a %d-byte %s", n, h.size, what)
	}
	return h.p, nil
}
