package device

import (
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Adopt makes a *Buffer of device memory that a domain package allocated (managed memory,
// say) and charged as kind, so that every API taking a Mem accepts it. release frees it when
// the Buffer is freed with Free or left to Close: it runs on the actor thread after the device
// stream has drained, with the address and that stream, and must order itself after any other
// stream's use of the memory. On the actor thread.
func (d *Device) Adopt(ptr DevicePtr, size uint64, kind MemKind, release func(rt backend.Device, p DevicePtr, s backend.Stream) error) *Buffer {
	b := &Buffer{dev: d, ptr: ptr, size: size, kind: kind, release: release}
	d.live.buffers.add(b)
	return b
}

// Retire marks b freed without releasing its memory, for a caller that frees it itself in
// stream order, and returns its address: from then on every use of b is an ErrFreed error.
// Retiring twice is an ErrFreed error; retiring a buffer whose allocation failed, an
// ErrAllocFailed error. Retire leaves b's charge to the caller that queued the free, which
// gives it back with Discharge when it queues it. On the actor thread.
func (d *Device) Retire(b *Buffer) (DevicePtr, error) {
	if b == nil {
		return 0, invalid("Retire of a nil buffer")
	}
	if b.dev != d {
		return 0, wrongDevice("buffer", b.dev, d)
	}
	if err := b.freeable(); err != nil {
		return 0, err
	}
	b.freed.Store(true)
	d.live.buffers.remove(b)
	return b.ptr, nil
}

// Kind is the kind of memory the buffer is.
func (b *Buffer) Kind() MemKind { return b.kind }

// Local is per-device state of a domain package, made by mk on first use and kept until the
// device closes: on the actor thread only.
func (d *Device) Local(key any, mk func() any) any {
	if d.ext == nil {
		d.ext = map[any]any{}
	}
	v, ok := d.ext[key]
	if !ok {
		v = mk()
		d.ext[key] = v
	}
	return v
}

// regionOf is m.region(), with a nil pointer to a type that embeds *Buffer (whose promoted
// region would dereference nil) reading as a nil buffer instead of a crash.
func regionOf(m Mem) (b *Buffer, off, n uint64) {
	defer func() {
		if recover() != nil {
			b, off, n = nil, 0, 0
		}
	}()
	return m.region()
}
