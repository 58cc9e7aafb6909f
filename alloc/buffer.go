package alloc

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/streams"
)

// Buffer is Len elements of T in one device's memory, following the order of one stream. T
// is a number or a struct or array of numbers (no pointers). It embeds the *device.Buffer
// it is made of, so it is a device.Mem: kernel launches, streams copies and memsets take it.
// Its methods are safe for concurrent use.
type Buffer[T any] struct {
	*device.Buffer
	n        int
	elemSize uintptr
	stream   *streams.Stream

	// MallocAsync's device buffer (the embedded one points here), future and message, held
	// here so that an allocation is one object.
	mem   device.Buffer
	made  streams.Future
	op    streams.AllocOp
	pool  *Pool  // FromPool's, or nil: the device's current pool
	bytes uint64 // the allocation's size
}

// asyncAlloc is a Buffer as the allocation MallocAsync queues (streams.StreamAllocator),
// without that method in Buffer's own API.
type asyncAlloc[T any] Buffer[T]

func (a *asyncAlloc[T]) AllocateOn(rt backend.Device, h backend.Stream) (device.DevicePtr, error) {
	var p backend.DevicePtr
	var err error
	if a.pool != nil {
		if err = a.pool.alive(); err == nil {
			p, err = rt.MallocFromPoolAsync(a.bytes, a.pool.h, h)
		}
	} else {
		p, err = rt.MallocAsync(a.bytes, h)
	}
	if err != nil {
		return 0, fmt.Errorf("gpuactor/alloc: MallocAsync(%d bytes) on device %d: %w", a.bytes, a.stream.Device().Ordinal(), err)
	}
	return p, nil
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
// later use of the buffer waits for by being queued after it (Ptr waits for it too); the
// future completes when the GPU reaches the allocation. Free it with FreeAsync or Free.
//
// MallocAsync itself fails for what it can tell at once: a nil stream, a bad n or element
// type, a pool of another device or destroyed, the device's memory limit
// (device.ErrMemoryLimit), a closed or failed device, or ctx ended before the allocation was
// queued; then nothing is allocated. A failure of the allocation itself (out of memory, a pool
// at its maximum size) completes the future with the error, and every later use of the
// buffer fails with device.ErrAllocFailed wrapping it; freeing the buffer then fails with that
// error too, and nothing stays counted in device.Usage. Once queued, the allocation is made
// whatever happens to ctx, and the buffer is the caller's to free.
func MallocAsync[T any](ctx context.Context, s *streams.Stream, n int, opts ...AllocOption) (*Buffer[T], *streams.Future, error) {
	if s == nil {
		return nil, nil, invalid("MallocAsync on a nil stream")
	}
	size, err := elemSize[T]()
	if err != nil {
		return nil, nil, err
	}
	bytes, err := byteCount("MallocAsync", n, size)
	if err != nil {
		return nil, nil, err
	}
	d := s.Device()
	pool := poolOf(opts)
	if pool != nil {
		if pool.dev != d {
			return nil, nil, wrongDevice("pool", pool.dev, d)
		}
		if err := pool.alive(); err != nil { // checked again on the actor, where Destroy runs
			return nil, nil, err
		}
	}
	b := &Buffer[T]{n: n, elemSize: size, stream: s, pool: pool, bytes: bytes}
	b.Buffer = &b.mem
	err = streams.AllocAsync(ctx, s, &b.mem, bytes, device.KindAsync, &b.made, releaseAsync, &b.op, (*asyncAlloc[T])(b))
	if err != nil {
		return nil, nil, err
	}
	return b, &b.made, nil
}

// poolOf is the pool opts choose, or nil. A function of its own: the config escapes to the
// options, and would cost every MallocAsync an allocation, not only those given options.
func poolOf(opts []AllocOption) *Pool {
	if len(opts) == 0 {
		return nil
	}
	var c allocConfig
	for _, o := range opts {
		o(&c)
	}
	return c.pool
}

// releaseAsync frees a stream-ordered allocation that Free or Close frees without a stream of
// its own: every stream's use of it must be over first.
func releaseAsync(rt backend.Device, p device.DevicePtr, s backend.Stream) error {
	if err := rt.Synchronize(); err != nil {
		return err
	}
	return rt.FreeAsync(p, s)
}

// Malloc allocates n elements of T with cudaMalloc (no pool) and ties the buffer to stream s:
// its copies and FreeAsync are ordered on s.
func Malloc[T any](ctx context.Context, s *streams.Stream, n int) (*Buffer[T], error) {
	if s == nil {
		return nil, invalid("Malloc on a nil stream")
	}
	size, err := elemSize[T]()
	if err != nil {
		return nil, err
	}
	bytes, err := byteCount("Malloc", n, size)
	if err != nil {
		return nil, err
	}
	buf, err := s.Device().Malloc(ctx, bytes)
	if err != nil {
		return nil, err
	}
	return &Buffer[T]{Buffer: buf, n: n, elemSize: size, stream: s}, nil
}

// Len is the number of elements.
func (b *Buffer[T]) Len() int { return b.n }

// ElemSize is sizeof(T) in bytes.
func (b *Buffer[T]) ElemSize() uintptr { return b.elemSize }

// Stream is the stream whose order the buffer follows.
func (b *Buffer[T]) Stream() *streams.Stream { return b.stream }

// Mem is the buffer as device memory, for APIs that take a device.Mem.
func (b *Buffer[T]) Mem() device.Mem { return b.Buffer }

// Elems is elements [i, j) of the buffer as device memory.
func (b *Buffer[T]) Elems(i, j int) device.Slice {
	if i < 0 || j < i || j > b.n {
		return device.Range(b.Buffer, b.Buffer.Size()+1, 0) // refused with ErrOutOfRange when used
	}
	return b.Buffer.Slice(uint64(i)*uint64(b.elemSize), uint64(j-i)*uint64(b.elemSize))
}

// FreeAsync queues the free of the buffer on s (nil: the buffer's own stream), after the work
// queued there so far, and returns without waiting. Every use of the buffer queued after it
// is a device.ErrFreed error, and so is a second free. The future completes when the GPU
// reaches the free, or with why the buffer could not be freed (already freed, its allocation
// failed: device.ErrAllocFailed). device.Usage stops counting the buffer when FreeAsync
// queues the free.
func (b *Buffer[T]) FreeAsync(ctx context.Context, s *streams.Stream) *streams.Future {
	f, _ := b.queueFree(ctx, s)
	return f
}

// Free is FreeAsync on the buffer's own stream without the future: it queues the free and
// returns once it is queued, not when it has run, so that freeing costs no round trip to the
// device (the device runs the free before anything queued after it). Its error is what can be
// told at once: a nil buffer, a second free (device.ErrFreed), a buffer whose allocation
// failed (device.ErrAllocFailed), a closed or failed device, ctx ended before the free was
// queued. A runtime failure when the free runs is not returned (the runtime reports one only
// once the device has failed, and every later call on it then fails); await FreeAsync's
// future to see it, or to know when the GPU has passed the free.
//
// A buffer of Malloc is released with cudaFree once the work queued on its stream so far has
// finished; one of MallocAsync goes back to its pool in stream order (cudaFreeAsync).
func (b *Buffer[T]) Free(ctx context.Context) error {
	_, err := b.queueFree(ctx, nil)
	return err
}

// queueFree queues the free on s and gives the buffer's charge back; err is what is known as
// it returns.
func (b *Buffer[T]) queueFree(ctx context.Context, s *streams.Stream) (*streams.Future, error) {
	fail := func(err error) (*streams.Future, error) { return actor.Completed(struct{}{}, err), err }
	if b == nil || b.Buffer == nil {
		return fail(invalid("free of a nil buffer"))
	}
	if s == nil {
		s = b.stream
	}
	d := b.Device()
	if s.Device() != d {
		return fail(wrongDevice("buffer", d, s.Device()))
	}
	if err := d.Err(); err != nil { // the device would refuse it
		return fail(err)
	}
	buf := b.Buffer
	o := &freeOp{d: d, buf: buf}
	f := streams.Submit(ctx, s, &o.Op, o)
	if err := f.Err(); err != nil && (!buf.Freed() || errors.Is(err, device.ErrClosed)) {
		// Not queued, or refused already: the buffer stays as it was (or Close freed it).
		return f, err
	}
	if err := d.Discharge(buf); err != nil {
		return f, err
	}
	return f, nil
}

// freeOp is the message of FreeAsync and Free: half of every allocation pair, one object.
type freeOp struct {
	streams.Op
	d   *device.Device
	buf *device.Buffer
}

func (o *freeOp) EnqueueOn(rt backend.Device, _ *device.Tracker, h backend.Stream) error {
	p, err := o.d.Retire(o.buf)
	if err != nil {
		return err
	}
	if o.buf.Kind() == device.KindAsync {
		return rt.FreeAsync(p, h)
	}
	// Malloc's memory. cudaFree "may perform implicit synchronization" (cuda_runtime_api.h,
	// CUDA 13.0), which is no promise: wait for the stream's work, which may use it, first.
	if err := rt.StreamSynchronize(h); err != nil {
		return err
	}
	return rt.Free(p)
}

// CopyIn copies src into the start of the buffer, ordered on the buffer's stream after the
// work queued there so far, and returns once the copy has completed; src may then be reused.
// src must not be longer than the buffer.
func (b *Buffer[T]) CopyIn(ctx context.Context, src []T) error {
	if len(src) == 0 {
		return invalid("CopyIn of an empty slice")
	}
	if len(src) > b.n {
		return fmt.Errorf("%w: CopyIn of %d elements into a buffer of %d", device.ErrOutOfRange, len(src), b.n)
	}
	n := uint64(len(src)) * uint64(b.elemSize)
	p := unsafe.Pointer(unsafe.SliceData(src))
	return b.hostCopy(ctx, func(rt backend.Device, h backend.Stream, dst backend.DevicePtr) error {
		return rt.CopyHtoD(dst, p, n, h)
	}, src)
}

// CopyOut copies the start of the buffer into dst, ordered on the buffer's stream after the
// work queued there so far, and returns once dst holds the data. dst must not be longer than
// the buffer.
func (b *Buffer[T]) CopyOut(ctx context.Context, dst []T) error {
	if len(dst) == 0 {
		return invalid("CopyOut into an empty slice")
	}
	if len(dst) > b.n {
		return fmt.Errorf("%w: CopyOut of %d elements from a buffer of %d", device.ErrOutOfRange, len(dst), b.n)
	}
	n := uint64(len(dst)) * uint64(b.elemSize)
	p := unsafe.Pointer(unsafe.SliceData(dst))
	return b.hostCopy(ctx, func(rt backend.Device, h backend.Stream, src backend.DevicePtr) error {
		return rt.CopyDtoH(p, src, n, h)
	}, dst)
}

// hostCopy runs a copy between the buffer and Go memory keep on the buffer's stream. Once the
// copy has been queued the caller waits for the GPU to finish it even if ctx ends, so that the
// slice is never touched after the call returns.
func (b *Buffer[T]) hostCopy(ctx context.Context, cp func(rt backend.Device, h backend.Stream, p backend.DevicePtr) error, keep []T) error {
	if b == nil || b.Buffer == nil {
		return invalid("copy with a nil buffer")
	}
	d := b.Device()
	buf := b.Buffer
	var queued bool
	f := streams.Enqueue(ctx, b.stream, func(rt backend.Device, _ *device.Tracker, h backend.Stream) error {
		p, _, err := d.Resolve("buffer", buf)
		if err != nil {
			return err
		}
		if err := cp(rt, h, p); err != nil {
			return err
		}
		queued = true
		return nil
	})
	_, err := f.Await(ctx)
	if err != nil && !f.Ready() {
		// The op may be running or have run: wait for its outcome, which is the only way to
		// know whether the GPU still holds keep.
		_, opErr := f.Await(context.Background())
		if queued {
			err = fmt.Errorf("%w (the copy had been queued and was completed: %v)", err, opErr)
		}
	}
	runtime.KeepAlive(keep)
	return err
}
