package alloc

import (
	"context"
	"fmt"
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
}

// AllocOption configures MallocAsync.
type AllocOption func(*allocConfig)

type allocConfig struct{ pool *Pool }

// FromPool allocates from p instead of the device's current pool.
func FromPool(p *Pool) AllocOption { return func(c *allocConfig) { c.pool = p } }

// MallocAsync queues the allocation of n elements of T on s, from the device's current pool or
// the one given with FromPool. The buffer is usable at once by work queued on s after it
// (and by other streams ordered after s, through events); the future completes when the GPU
// reaches the allocation. Free it with FreeAsync or Free.
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
	var c allocConfig
	for _, o := range opts {
		o(&c)
	}
	d := s.Device()
	if c.pool != nil && c.pool.dev != d {
		return nil, nil, wrongDevice("pool", c.pool.dev, d)
	}
	f := actor.NewFuture[struct{}]()
	op := streams.Exec(ctx, s, func(rt backend.Device, tr *device.Tracker, h backend.Stream) (*Buffer[T], error) {
		if err := d.Charge(device.KindAsync, bytes); err != nil {
			return nil, err
		}
		var p backend.DevicePtr
		var err error
		if c.pool != nil {
			if err = c.pool.alive(); err == nil {
				p, err = rt.MallocFromPoolAsync(bytes, c.pool.h, h)
			}
		} else {
			p, err = rt.MallocAsync(bytes, h)
		}
		if err != nil {
			d.Uncharge(device.KindAsync, bytes)
			return nil, fmt.Errorf("gpuactor/alloc: MallocAsync(%d bytes) on device %d: %w", bytes, d.Ordinal(), err)
		}
		buf := d.Adopt(p, bytes, device.KindAsync, func(s backend.Stream) error {
			// Free or Close without a stream: every stream's use must be over first.
			if err := rt.Synchronize(); err != nil {
				return err
			}
			return rt.FreeAsync(p, s)
		})
		tr.After(h, func(err error) { f.Complete(struct{}{}, err) })
		return &Buffer[T]{Buffer: buf, n: n, elemSize: size, stream: s}, nil
	})
	b, err := op.Await(ctx)
	if err != nil {
		if ctx.Err() != nil {
			// Queued before ctx ended, the allocation may still be made: free it then.
			go func() {
				if b, err := op.Await(context.Background()); err == nil {
					b.FreeAsync(context.Background(), nil)
				}
			}()
		}
		return nil, nil, err
	}
	return b, f, nil
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
// queued there so far. From this call on every use of the buffer is a device.ErrFreed error;
// freeing twice too. The future completes when the GPU reaches the free.
func (b *Buffer[T]) FreeAsync(ctx context.Context, s *streams.Stream) *streams.Future {
	if b == nil || b.Buffer == nil {
		return actor.Completed(struct{}{}, invalid("FreeAsync of a nil buffer"))
	}
	if s == nil {
		s = b.stream
	}
	d := b.Device()
	if s.Device() != d {
		return actor.Completed(struct{}{}, wrongDevice("buffer", d, s.Device()))
	}
	buf := b.Buffer
	return streams.Enqueue(ctx, s, func(rt backend.Device, _ *device.Tracker, h backend.Stream) error {
		if err := d.Retire(buf); err != nil {
			return err
		}
		if buf.Kind() == device.KindAsync {
			return rt.FreeAsync(buf.Ptr(), h)
		}
		return rt.Free(buf.Ptr()) // cudaFree waits for the device itself
	})
}

// Free frees the buffer in its stream's order and waits until the GPU has reached the free.
func (b *Buffer[T]) Free(ctx context.Context) error {
	_, err := b.FreeAsync(ctx, nil).Await(ctx)
	return err
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
	keepAlive(keep)
	return err
}
