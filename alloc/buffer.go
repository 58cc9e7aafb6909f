package alloc

import (
	"context"
	"errors"
	"unsafe"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// Buffer is Len elements of T in one device's memory, following the order of one stream: the
// element type the typed copies (streams.CopyToDevice, CopyIn) move. It embeds the
// *device.Buffer it is made of, so it is a device.Mem (kernel launches, stream copies and
// memsets take it) with its Size, DevicePtr and Slice. Its methods are safe for concurrent
// use.
type Buffer[T any] struct {
	*device.Buffer
	n        int
	elemSize uintptr
	stream   *streams.Stream

	// The device buffer (the embedded one points here) and, for MallocAsync, the promise of
	// its message, held here so that an allocation is one object.
	mem core.AsyncAlloc
}

// AllocOption configures MallocAsync.
type AllocOption func(*allocConfig)

type allocConfig struct{ pool *Pool }

// FromPool allocates from p instead of the device's current pool.
func FromPool(p *Pool) AllocOption { return func(c *allocConfig) { c.pool = p } }

// MallocAsync queues the allocation of n elements of T on s, from the device's current pool or
// the one given with FromPool, and returns without waiting for the device: the buffer is
// usable at once by work queued on s after it (and by other streams ordered after s, through
// events). Its address is known once the device's actor has run the allocation, which every
// later use of the buffer waits for by being queued after it (DevicePtr waits for it too); the
// future completes when the GPU reaches the allocation. Free it with Close or CloseOn.
//
// MallocAsync itself fails for what it can tell at once: a nil stream, a bad n or element
// type, a pool of another device or closed, the device's memory limit
// (device.ErrMemoryLimit), a closed or failed device, or ctx ended before the allocation was
// queued; then nothing is allocated. A failure of the allocation itself (out of memory, a pool
// at its maximum size) completes the future with the error, and every later use of the
// buffer fails with device.ErrAllocFailed wrapping it; closing the buffer then fails with that
// error too, and nothing stays counted in device.Usage. Once queued, the allocation is made
// whatever happens to ctx, and the buffer is the caller's to free.
func MallocAsync[T any](ctx context.Context, s *streams.Stream, n int, opts ...AllocOption) (*Buffer[T], *streams.Future, error) {
	if s == nil {
		return nil, nil, core.Invalid("MallocAsync on a nil stream")
	}
	size, err := elemSize[T]()
	if err != nil {
		return nil, nil, err
	}
	bytes, err := byteCount("MallocAsync", n, size)
	if err != nil {
		return nil, nil, err
	}
	b := &Buffer[T]{n: n, elemSize: size, stream: s}
	b.Buffer = (*device.Buffer)(&b.mem.Buffer)
	if err := core.AllocAsync(ctx, (*core.Stream)(s), &b.mem, bytes, poolOf(opts)); err != nil {
		return nil, nil, err
	}
	return b, b.mem.Future(), nil
}

// poolOf is the pool opts choose, or nil. A function of its own: the config escapes to the
// options, and would cost every MallocAsync an allocation, not only those given options.
func poolOf(opts []AllocOption) *core.Pool {
	if len(opts) == 0 {
		return nil
	}
	var c allocConfig
	for _, o := range opts {
		o(&c)
	}
	return c.pool.core()
}

// Malloc allocates n elements of T with cudaMalloc (no pool), returning once they are
// allocated, and ties the buffer to stream s: its Close is ordered on s.
func Malloc[T any](ctx context.Context, s *streams.Stream, n int) (*Buffer[T], error) {
	if s == nil {
		return nil, core.Invalid("Malloc on a nil stream")
	}
	size, err := elemSize[T]()
	if err != nil {
		return nil, err
	}
	bytes, err := byteCount("Malloc", n, size)
	if err != nil {
		return nil, err
	}
	b := &Buffer[T]{n: n, elemSize: size, stream: s}
	b.Buffer = (*device.Buffer)(&b.mem.Buffer)
	if err := core.Malloc(ctx, (*core.Device)(s.Device()), &b.mem.Buffer, bytes); err != nil {
		return nil, err
	}
	return b, nil
}

// Len is the number of elements (0 for a nil buffer).
func (b *Buffer[T]) Len() int {
	if b == nil {
		return 0
	}
	return b.n
}

// ElemSize is sizeof(T) in bytes.
func (b *Buffer[T]) ElemSize() uintptr {
	if b == nil {
		var zero T
		return unsafe.Sizeof(zero)
	}
	return b.elemSize
}

// Stream is the stream whose order the buffer follows (nil for a nil buffer).
func (b *Buffer[T]) Stream() *streams.Stream {
	if b == nil {
		return nil
	}
	return b.stream
}

// Size is the buffer's length in bytes (0 for a nil buffer).
func (b *Buffer[T]) Size() uint64 {
	if b == nil {
		return 0
	}
	return b.Buffer.Size()
}

// Device is the buffer's device (nil for a nil buffer).
func (b *Buffer[T]) Device() *device.Device {
	if b == nil {
		return nil
	}
	return b.Buffer.Device()
}

// Closed reports whether the buffer's free was queued; a nil buffer counts as closed.
func (b *Buffer[T]) Closed() bool { return b == nil || b.Buffer.Closed() }

// DevicePtr is the buffer's device address, once its allocation has run; see
// device.Buffer.DevicePtr. A nil buffer is an ErrInvalidArgument error.
func (b *Buffer[T]) DevicePtr(ctx context.Context) (cuda.DevicePtr, error) {
	if b == nil {
		return 0, core.Invalid("DevicePtr of a nil buffer")
	}
	return b.Buffer.DevicePtr(ctx)
}

// Slice is bytes [off, off+n) of the buffer as device memory; on a nil buffer, a slice that
// every operation refuses.
func (b *Buffer[T]) Slice(off, n uint64) device.Slice {
	if b == nil {
		return device.Range(nil, off, n)
	}
	return b.Buffer.Slice(off, n)
}

// Elems is elements [i, j) of the buffer as device memory; on a nil buffer, a slice that every
// operation refuses.
func (b *Buffer[T]) Elems(i, j int) device.Slice {
	if b == nil {
		return device.Range(nil, 0, 0)
	}
	if i < 0 || j < i || j > b.n {
		return device.Range(b.Buffer, b.Buffer.Size()+1, 0) // refused with ErrOutOfRange when used
	}
	return b.Buffer.Slice(uint64(i)*uint64(b.elemSize), uint64(j-i)*uint64(b.elemSize))
}

// CloseOn queues the free of the buffer on s (nil: the buffer's own stream, or the device's
// own once that stream was closed), after the work queued there so far, and returns without
// waiting. Every use of the buffer queued after it is a device.ErrClosed error, and so is a
// second free; a closed s is refused. The future completes when the GPU reaches
// the free, or with why the buffer could not be freed (already freed, its allocation failed:
// device.ErrAllocFailed). device.Usage stops counting the buffer when the free is queued.
func (b *Buffer[T]) CloseOn(ctx context.Context, s *streams.Stream) *streams.Future {
	f, _ := b.queueFree(ctx, s)
	return f
}

// Close is CloseOn on the buffer's own stream without the future: it queues the free and
// returns once it is queued, not when it has run, so that freeing costs no round trip to the
// device (the device runs the free before anything queued after it). Its error is what can be
// told at once: a nil buffer, a second free (device.ErrClosed), a buffer whose allocation
// failed (device.ErrAllocFailed), a closed or failed device, ctx ended before the free was
// queued. A runtime failure when the free runs is not returned (the runtime reports one only
// once the device has failed, and every later call on it then fails); wait on CloseOn's
// future to see it, or to know when the GPU has passed the free.
//
// A buffer of Malloc is released with cudaFree once the work queued on its stream so far has
// finished; one of MallocAsync goes back to its pool in stream order (cudaFreeAsync).
func (b *Buffer[T]) Close(ctx context.Context) error {
	_, err := b.queueFree(ctx, nil)
	return err
}

// queueFree queues the free on s and gives the buffer's charge back; err is what is known as
// it returns.
func (b *Buffer[T]) queueFree(ctx context.Context, s *streams.Stream) (*streams.Future, error) {
	fail := func(err error) (*streams.Future, error) { return actor.Completed(struct{}{}, err), err }
	if b == nil || b.Buffer == nil {
		return fail(core.Invalid("free of a nil buffer"))
	}
	if s == nil {
		s = b.stream // closed, the free goes to the device's own stream (Tracking.Reroute)
	} else if err := (*core.Stream)(s).Alive(); err != nil {
		return fail(err)
	}
	d := b.Device()
	if s.Device() != d {
		return fail(wrongDevice("buffer", d, s.Device()))
	}
	if err := d.Err(); err != nil { // the device would refuse it
		return fail(err)
	}
	buf := (*core.Buffer)(b.Buffer)
	o := &freeOp{buf: buf}
	t := core.Tracking{Reroute: true} // whatever becomes of the stream, the memory is freed
	if buf.Kind() != core.KindAsync {
		t.Then = func(err error) error { return errors.Join(err, o.err) }
	}
	f := core.Submit(ctx, (*core.Stream)(s), &o.Msg, o, t)
	if err := f.Err(); err != nil && (!buf.Closed() || errors.Is(err, device.ErrClosed)) {
		// Not queued, or refused already: the buffer stays as it was (or Close freed it).
		return f, err
	}
	if err := buf.RefundFree(); err != nil {
		return f, err
	}
	return f, nil
}

// freeOp is the message of CloseOn and Close: half of every allocation pair, one object.
type freeOp struct {
	core.Msg
	buf *core.Buffer
	err error // a cudaFree's, once the GPU has passed the stream's work
}

func (o *freeOp) Enqueue(rt backend.Device, tr *core.Tracker, h backend.Stream) error {
	p, err := o.buf.Retire()
	if err != nil {
		return err
	}
	if o.buf.Kind() == core.KindAsync {
		if err := rt.FreeAsync(p, h); err != nil {
			return err
		}
		tr.FreedOn(h) // Synchronize lets the pool release it
		return nil
	}
	// Malloc's memory has no stream-ordered free: it is freed once the GPU has passed the
	// work queued on the stream so far, which may use it, before the operation completes.
	// When the GPU has passed it already (the buffer's last use was awaited), that is now.
	if tr.Drained(h) {
		o.err = rt.Free(p)
		o.Finished()
		return nil
	}
	tr.After(h, func(err error) {
		if err == nil {
			o.err = rt.Free(p)
		}
	})
	return nil
}
