package device

import (
	"fmt"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// Adopt makes a *Buffer of device memory that a domain package allocated (from a pool, or
// managed) and charged as kind, so that every API taking a Mem accepts it. release frees it
// when the Buffer is freed with Free or left to Close: it runs on the actor thread after the
// device stream has drained, with that stream, and must order itself after any other stream's
// use of the memory. On the actor thread.
func (d *Device) Adopt(ptr DevicePtr, size uint64, kind MemKind, release func(s backend.Stream) error) *Buffer {
	b := &Buffer{dev: d, ptr: ptr, size: size, kind: kind, release: release}
	d.live.buffers[b] = struct{}{}
	return b
}

// Retire marks b freed without releasing it, for a caller that frees it itself (in stream
// order): from then on every use of b is an ErrFreed error. Retiring twice is an ErrFreed
// error. On the actor thread.
func (d *Device) Retire(b *Buffer) error {
	if b == nil {
		return invalid("Retire of a nil buffer")
	}
	if b.dev != d {
		return wrongDevice("buffer", b.dev, d)
	}
	if b.freed.Load() {
		return fmt.Errorf("%w: buffer %#x of %d bytes freed twice", ErrFreed, uint64(b.ptr), b.size)
	}
	b.freed.Store(true)
	delete(d.live.buffers, b)
	d.Uncharge(b.kind, b.size)
	return nil
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
