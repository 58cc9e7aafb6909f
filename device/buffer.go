package device

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// DevicePtr is an address in a device's memory.
type DevicePtr = backend.DevicePtr

// Buffer is device memory from Malloc, or from a domain package's allocation (a stream-ordered
// one: alloc.MallocAsync; managed memory). Free it with Free (or let Device.Close free it).
type Buffer struct {
	dev     *Device
	size    uint64
	kind    MemKind
	release func(rt backend.Device, p DevicePtr, s backend.Stream) error // nil: cudaFree (see Adopt)

	// ptr is written once: when the buffer is made, or, for a stream-ordered allocation
	// (AllocAsync), on the actor thread when the allocation's message runs, before made
	// completes. So it is read on the actor thread, or elsewhere once made has completed.
	ptr DevicePtr

	// A stream-ordered allocation's buffer exists before its memory (pending.go): made
	// completes when the allocation's message has run, with nil once ptr is set or with why
	// there is no memory; msg is that message's future, which fails without made completing
	// when the message was refused without running (a failed device).
	pending bool
	made    actor.Future[struct{}]
	msg     *actor.Future[struct{}]
	alloc   Allocator // the allocation, until it runs

	freed atomic.Bool   // the free has run (on the actor thread): every later use is refused
	life  atomic.Uint32 // whether the buffer's Charge was given back (pending.go)

	prev, next *Buffer // the device's live list (live.go), actor thread only
}

// Mem is device memory that copies, memsets and kernels can use: a *Buffer or a Slice of one.
type Mem interface {
	region() (b *Buffer, off, n uint64)
}

// Slice is a byte range of a Buffer. It is checked against the buffer when used, so a slice
// that runs past the end is reported by the operation that uses it.
type Slice struct {
	buf       *Buffer
	off, size uint64
}

// Malloc allocates size bytes of device memory.
func (d *Device) Malloc(ctx context.Context, size uint64) (*Buffer, error) {
	if size == 0 {
		return nil, invalid("Malloc of 0 bytes")
	}
	return call(ctx, d, func() (*Buffer, error) {
		if err := d.Charge(KindDevice, size); err != nil {
			return nil, err
		}
		p, err := d.dev.Malloc(size)
		if err != nil {
			d.Uncharge(KindDevice, size)
			return nil, fmt.Errorf("gpuactor: Malloc(%d bytes) on device %d: %w", size, d.ordinal, err)
		}
		b := &Buffer{dev: d, ptr: p, size: size}
		d.live.buffers.add(b)
		return b, nil
	}).Await(ctx)
}

// Free releases the buffer, after the work queued by the device's own calls (launches,
// copies) has finished, and returns once it is released. Freeing twice, or using the buffer
// afterwards, is an ErrFreed error; freeing a buffer whose stream-ordered allocation failed is
// an ErrAllocFailed error.
func (b *Buffer) Free(ctx context.Context) error {
	if b == nil {
		return invalid("Free of a nil buffer")
	}
	return do(ctx, b.dev, func() error { return b.dev.freeBuffer(b) })
}

// freeBuffer runs on the actor thread.
func (d *Device) freeBuffer(b *Buffer) error {
	if err := b.freeable(); err != nil {
		return err
	}
	// The buffer's pending work must not outlive it. cudaFree "may perform implicit
	// synchronization" for memory that is not stream-ordered (cuda_runtime_api.h, CUDA 13.0):
	// a may, not a promise, so the wait stays.
	if err := d.dev.StreamSynchronize(d.stream); err != nil {
		return err
	}
	b.freed.Store(true)
	d.live.buffers.remove(b)
	d.discharge(b)
	if b.release != nil {
		return b.release(d.dev, b.ptr, d.stream)
	}
	return d.dev.Free(b.ptr)
}

// Ptr is the buffer's device address, for kernel arguments built by hand. The address of a
// stream-ordered allocation (alloc.MallocAsync) is known once the device's actor has run the
// allocation, shortly after MallocAsync returns: until then Ptr waits for it (not for the
// GPU). Ptr is 0 when that allocation failed. PtrWait bounds the wait and reports the error.
func (b *Buffer) Ptr() DevicePtr {
	p, _ := b.PtrWait(context.Background())
	return p
}

// PtrWait is Ptr with a deadline: it waits for a stream-ordered allocation's address until
// ctx ends, and returns an ErrAllocFailed error (wrapping the cause) when the allocation
// failed. A buffer from Malloc has its address at once.
func (b *Buffer) PtrWait(ctx context.Context) (DevicePtr, error) {
	if b == nil {
		return 0, invalid("address of a nil buffer")
	}
	if !b.pending {
		return b.ptr, nil
	}
	if err := b.awaitMade(ctx); err != nil {
		return 0, err
	}
	return b.ptr, nil
}

// Size is the buffer's length in bytes.
func (b *Buffer) Size() uint64 { return b.size }

// Device is the device the buffer lives on.
func (b *Buffer) Device() *Device { return b.dev }

// Freed reports whether Free (or a stream-ordered free) has run.
func (b *Buffer) Freed() bool { return b.freed.Load() }

// Slice is the byte range [off, off+n) of the buffer.
func (b *Buffer) Slice(off, n uint64) Slice { return Slice{buf: b, off: off, size: n} }

func (b *Buffer) region() (*Buffer, uint64, uint64) {
	if b == nil {
		return nil, 0, 0
	}
	return b, 0, b.size
}

func (s Slice) region() (*Buffer, uint64, uint64) { return s.buf, s.off, s.size }

// Buffer is the buffer the slice views.
func (s Slice) Buffer() *Buffer { return s.buf }

// Offset is where the slice starts in its buffer, in bytes.
func (s Slice) Offset() uint64 { return s.off }

// Size is the slice's length in bytes.
func (s Slice) Size() uint64 { return s.size }

// span checks m against device d and returns its address and length. On the actor thread,
// where it is authoritative: allocations and frees happen there too.
func (d *Device) span(what string, m Mem) (DevicePtr, uint64, error) {
	if m == nil {
		return 0, 0, invalid("%s is nil", what)
	}
	b, off, n := regionOf(m)
	if b == nil {
		return 0, 0, invalid("%s is a nil buffer", what)
	}
	if b.dev != d {
		return 0, 0, wrongDevice(what, b.dev, d)
	}
	if err := b.usable(what); err != nil {
		return 0, 0, err
	}
	if off > b.size || n > b.size-off {
		return 0, 0, outOfRange("%s [%d, %d) runs past the end of its %d-byte buffer", what, off, off+n, b.size)
	}
	if n == 0 {
		return 0, 0, invalid("%s is empty", what)
	}
	return b.ptr + DevicePtr(off), n, nil
}

// ok reports, cheaply, that b has memory and has not been freed; usable says why not.
func (b *Buffer) ok() bool {
	return !b.freed.Load() && (!b.pending || b.made.Ready() && b.made.Err() == nil)
}

// usable checks, on the actor thread, that b has memory and has not been freed.
func (b *Buffer) usable(what string) error {
	if b.pending {
		if err := b.allocErr(); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrAllocFailed, what, err)
		}
	}
	if b.freed.Load() {
		return freedErr("%s (buffer %#x) used after Free", what, uint64(b.ptr))
	}
	return nil
}

// freeable checks, on the actor thread, that b has memory to free.
func (b *Buffer) freeable() error {
	if b.pending {
		if err := b.allocErr(); err != nil {
			return fmt.Errorf("%w: free of a buffer whose allocation failed: %w", ErrAllocFailed, err)
		}
	}
	if b.freed.Load() {
		return freedErr("buffer %#x of %d bytes freed twice", uint64(b.ptr), b.size)
	}
	return nil
}

// owner is the device m lives on, or an error for a nil m.
func owner(what string, m Mem) (*Device, error) {
	if m == nil {
		return nil, invalid("%s is nil", what)
	}
	b, _, _ := regionOf(m)
	if b == nil {
		return nil, invalid("%s is a nil buffer", what)
	}
	return b.dev, nil
}

// Range is the byte range [off, off+n) of m (a *Buffer or a Slice), checked when used like
// any Slice. Ranging a Slice is relative to the Slice's start.
func Range(m Mem, off, n uint64) Slice {
	if m == nil {
		return Slice{}
	}
	b, base, size := regionOf(m)
	if b != nil && (off > size || n > size-off) {
		// Past the end of m, though perhaps not of its buffer: make the operation that uses
		// it report the range.
		return Slice{buf: b, off: b.size + 1, size: n}
	}
	return Slice{buf: b, off: base + off, size: n}
}

// Size is the length in bytes of m (a *Buffer or a Slice); 0 for nil.
func Size(m Mem) uint64 {
	if m == nil {
		return 0
	}
	_, _, n := regionOf(m)
	return n
}
