package core

import (
	"context"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Mem is device memory that copies, memsets and kernels take: a *Buffer (or a public type
// defined over one, or embedding one) or a Span of one. Its one method is unexported, so only
// this module's types are Mem.
type Mem interface {
	region() (b *Buffer, off, n uint64)
}

// Buffer is device memory: the state device.Buffer is a face over.
type Buffer struct {
	memHead // first, so that a *Buffer, and a face type defined over Buffer, is a Mem
	dev     *Device
	size    uint64
	kind    MemKind
	// release frees the memory when the buffer is closed, or left to the device's Close; nil:
	// cudaFree. It runs on the actor thread once the GPU has passed the work queued so far on
	// every stream of the device, with the address and the device's own stream.
	release func(rt backend.Device, p cuda.DevicePtr, s backend.Stream) error

	// ptr is written once: when the buffer is made, or, for a stream-ordered allocation, on
	// the actor thread when the allocation's message runs, before ready completes. So it is
	// read on the actor thread, or elsewhere once ready has completed.
	ptr cuda.DevicePtr

	// A stream-ordered allocation's buffer exists before its memory (streamalloc.go): ready
	// completes when the allocation's message has run, with nil once ptr is set or with why
	// there is no memory; msg is that message's future, which fails without ready completing
	// when the message was refused without running (a failed device).
	pending   bool
	ready     actor.Promise[struct{}]
	msg       *actor.Future[struct{}]
	allocOn   *Stream // the allocation's stream, until it runs
	allocFrom *Pool   // its pool, likewise; nil: the device's current pool

	closed atomic.Bool   // the free has run (on the actor thread): every later use is refused
	life   atomic.Uint32 // whether the buffer's charge was given back (RefundOnce)

	prev, next *Buffer // the device's live list, actor thread only
}

// memHead is a Buffer's first field, of no size: its method finds the Buffer it heads.
type memHead struct{}

func (h *memHead) region() (*Buffer, uint64, uint64) {
	b := (*Buffer)(unsafe.Pointer(h))
	return b, 0, b.size
}

// Span is the byte range [off, off+n) of a Buffer, checked against the buffer when used.
type Span struct {
	b      *Buffer
	off, n uint64
}

func (s Span) region() (*Buffer, uint64, uint64) { return s.b, s.off, s.n }

// Region is m's buffer and byte range; a nil m, or a nil pointer to a type that embeds a
// buffer (whose promoted method would dereference nil), reads as a nil buffer.
func Region(m Mem) (b *Buffer, off, n uint64) {
	if m == nil {
		return nil, 0, 0
	}
	defer func() {
		if recover() != nil {
			b, off, n = nil, 0, 0
		}
	}()
	return m.region()
}

// RangeOf is the byte range [off, off+n) of m, relative to m's start. A range past the end of
// m, though perhaps not of its buffer, is made to run past the buffer's end, so that the
// operation that uses it reports the range.
func RangeOf(m Mem, off, n uint64) Span {
	b, base, size := Region(m)
	if b != nil && (off > size || n > size-off) {
		return Span{b: b, off: b.size + 1, n: n}
	}
	return Span{b: b, off: base + off, n: n}
}

// Malloc allocates size bytes of device memory into b, a zero Buffer the caller holds (a
// face's, so that the buffer is one object). A caller whose ctx ends first is left holding
// nothing (Make).
func Malloc(ctx context.Context, d *Device, b *Buffer, size uint64) error {
	if size == 0 {
		return Invalid("Malloc of 0 bytes")
	}
	_, err := Make(ctx, d, func(rt backend.Device, _ *Tracker) (*Buffer, error) {
		if err := d.Charge(KindDevice, size); err != nil {
			return nil, err
		}
		p, err := RetryTrimmed(rt, func() (cuda.DevicePtr, error) { return rt.Malloc(size) })
		if err != nil {
			d.Refund(KindDevice, size)
			return nil, fmt.Errorf("gpuactor: Malloc(%d bytes) on device %d: %w", size, d.ordinal, err)
		}
		b.dev, b.ptr, b.size = d, p, size
		d.live.buffers.add(b)
		return b, nil
	}, func(_ backend.Device, _ *Tracker, b *Buffer) { _ = d.freeBuffer(b) })
	return err
}

// Adopt makes b, a zero Buffer, the buffer of device memory allocated on the actor thread
// (managed memory, say) and charged as kind, so that every API taking a Mem accepts it;
// release frees it (see Buffer.release). Actor thread only.
func (d *Device) Adopt(b *Buffer, ptr cuda.DevicePtr, size uint64, kind MemKind, release func(rt backend.Device, p cuda.DevicePtr, s backend.Stream) error) {
	b.dev, b.ptr, b.size, b.kind, b.release = d, ptr, size, kind, release
	d.live.buffers.add(b)
}

// Close frees the buffer once the GPU has passed the work queued so far on every stream of
// the device, and returns once it is freed; the device's other work goes on meanwhile (the
// runtime's cudaFree may still synchronize the device itself: stream-ordered memory, from
// alloc.MallocAsync, is freed without). From Close on, every use of the buffer is refused:
// closing twice, or using the buffer afterwards, is an ErrClosed error; closing a buffer
// whose stream-ordered allocation failed, an ErrAllocFailed error.
func (b *Buffer) Close(ctx context.Context) error {
	if b == nil || b.dev == nil {
		return Invalid("Close of a nil buffer")
	}
	d := b.dev
	return RunTracked(ctx, d, func(_ backend.Device, tr *Tracker, done func(error)) error {
		if err := d.retireBuffer(b); err != nil {
			return err
		}
		tr.AfterAll(func(err error) {
			if err != nil {
				done(err)
				return
			}
			// Copies on other devices' streams may still use b (peercopy.go).
			d.afterPeerHolds(b, func() { done(d.releaseBuffer(b)) })
		})
		return nil
	}).Wait(ctx)
}

// retireBuffer refuses every later use of b; on the actor thread.
func (d *Device) retireBuffer(b *Buffer) error {
	if err := b.freeable(); err != nil {
		return err
	}
	b.closed.Store(true)
	d.live.buffers.remove(b)
	return nil
}

// releaseBuffer frees b's memory and gives its charge back, once no queued work uses it; on
// the actor thread.
func (d *Device) releaseBuffer(b *Buffer) error {
	b.RefundOnce()
	if b.release != nil {
		return b.release(d.rt, b.ptr, d.stream.h)
	}
	return d.rt.Free(b.ptr)
}

// FreeNow frees b at once, on the actor thread: for a buffer no queued work can use yet (one
// just made for a caller who left).
func (d *Device) FreeNow(b *Buffer) error { return d.freeBuffer(b) }

// freeBuffer frees b at once: when the device closes, once every stream has drained.
func (d *Device) freeBuffer(b *Buffer) error {
	if err := d.retireBuffer(b); err != nil {
		return err
	}
	return d.releaseBuffer(b)
}

// Retire marks b freed without releasing its memory, for a caller that frees it itself in
// stream order, and returns its address: from then on every use of b is an ErrClosed error.
// Retiring twice is an ErrClosed error; retiring a buffer whose allocation failed, an
// ErrAllocFailed error. Retire leaves b's charge to the caller that queued the free, which
// gives it back with RefundOnce when it queues it. Actor thread only.
func (b *Buffer) Retire() (cuda.DevicePtr, error) {
	if err := b.freeable(); err != nil {
		return 0, err
	}
	b.closed.Store(true)
	b.dev.live.buffers.remove(b)
	return b.ptr, nil
}

// DevicePtr is the buffer's address, waiting until ctx ends for a stream-ordered allocation's to be
// known; an ErrAllocFailed error (wrapping the cause) when the allocation failed.
func (b *Buffer) DevicePtr(ctx context.Context) (cuda.DevicePtr, error) {
	if b == nil || b.dev == nil {
		return 0, Invalid("address of a nil buffer")
	}
	if !b.pending {
		return b.ptr, nil
	}
	if err := b.awaitReady(ctx); err != nil {
		return 0, err
	}
	return b.ptr, nil
}

// Size is the buffer's length in bytes (0 for a nil buffer).
func (b *Buffer) Size() uint64 {
	if b == nil {
		return 0
	}
	return b.size
}

// Device is the buffer's device (nil for a nil buffer).
func (b *Buffer) Device() *Device {
	if b == nil {
		return nil
	}
	return b.dev
}

// Kind is the kind of memory the buffer is.
func (b *Buffer) Kind() MemKind { return b.kind }

// Closed reports whether the buffer was freed (or its stream-ordered free queued); a nil
// buffer, which holds nothing, counts as closed.
func (b *Buffer) Closed() bool { return b == nil || b.closed.Load() }

// Resolve checks m against device d and returns its address and length; what names m in
// errors. On the actor thread, where it is authoritative: allocations and frees happen there
// too.
func (d *Device) Resolve(what string, m Mem) (cuda.DevicePtr, uint64, error) {
	if m == nil {
		return 0, 0, Invalid("%s is nil", what)
	}
	b, off, n := Region(m)
	if b == nil || b.dev == nil {
		return 0, 0, Invalid("%s is a nil buffer", what)
	}
	if b.dev != d {
		return 0, 0, WrongDevice(what, b.dev, d)
	}
	if err := b.usable(what); err != nil {
		return 0, 0, err
	}
	if off > b.size || n > b.size-off {
		return 0, 0, OutOfRange("%s [%d, %d) runs past the end of its %d-byte buffer", what, off, off+n, b.size)
	}
	if n == 0 {
		return 0, 0, Invalid("%s is empty", what)
	}
	return b.ptr + cuda.DevicePtr(off), n, nil
}

// Owner is the device m lives on, or an error for a nil m; what names m in errors.
func Owner(what string, m Mem) (*Device, error) {
	if m == nil {
		return nil, Invalid("%s is nil", what)
	}
	b, _, _ := Region(m)
	if b == nil || b.dev == nil {
		return nil, Invalid("%s is a nil buffer", what)
	}
	return b.dev, nil
}

// ok reports, cheaply, that b has memory and has not been freed; usable says why not.
func (b *Buffer) ok() bool {
	return !b.closed.Load() && (!b.pending || b.ready.Future().Ready() && b.ready.Future().Err() == nil)
}

// usable checks, on the actor thread, that b has memory and has not been freed.
func (b *Buffer) usable(what string) error {
	if b.pending {
		if err := b.allocErr(); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrAllocFailed, what, err)
		}
	}
	if b.closed.Load() {
		return Closed("%s (buffer %#x) used after Close", what, uint64(b.ptr))
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
	if b.closed.Load() {
		return Closed("buffer %#x of %d bytes closed twice", uint64(b.ptr), b.size)
	}
	return nil
}

// bufList is the device's live buffers, for Close to free: an intrusive doubly linked list,
// so that the actor adds and removes a buffer with a few pointer writes rather than a map
// insert and delete per stream-ordered allocation. Actor thread only.
type bufList struct{ head *Buffer }

func (l *bufList) add(b *Buffer) {
	b.prev, b.next = nil, l.head
	if l.head != nil {
		l.head.prev = b
	}
	l.head = b
}

// remove takes b out of the list; a buffer not in it is left alone.
func (l *bufList) remove(b *Buffer) {
	if b.prev == nil && l.head != b {
		return
	}
	if b.prev != nil {
		b.prev.next = b.next
	} else {
		l.head = b.next
	}
	if b.next != nil {
		b.next.prev = b.prev
	}
	b.prev, b.next = nil, nil
}
