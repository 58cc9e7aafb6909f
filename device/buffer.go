package device

import (
	"context"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Buffer is device memory from MallocBytes, or the device memory of a typed buffer of package
// alloc (which embeds one). Close it with Close, or let the device's Close free it.
type Buffer core.Buffer

// Mem is device memory that copies, memsets and kernels take: a *Buffer, a Slice of one, or a
// type of gpuactor's built on a buffer (alloc.Buffer, alloc.Managed). Only gpuactor's types
// are Mem: its method is unexported.
type Mem interface{ core.Mem }

// Slice is a byte range of a Buffer. It is checked against the buffer when used, so a slice
// that runs past the end is reported by the operation that uses it.
type Slice struct{ span }

type span = core.Span

func (b *Buffer) core() *core.Buffer { return (*core.Buffer)(b) }

// MallocBytes allocates size bytes of device memory (cudaMalloc); it returns once the memory
// is allocated. It is the untyped form of alloc.Malloc, which allocates elements of a type
// and ties the buffer to a stream.
func (d *Device) MallocBytes(ctx context.Context, size uint64) (*Buffer, error) {
	if d == nil {
		return nil, core.Invalid("MallocBytes on a nil device")
	}
	b := new(Buffer)
	if err := core.Malloc(ctx, d.core(), b.core(), size); err != nil {
		return nil, err
	}
	return b, nil
}

// Close frees the buffer after the work queued on the device's own stream (streams.Default)
// has finished, and returns once it is freed. Closing twice, or using the buffer afterwards,
// is an ErrClosed error; closing a buffer whose stream-ordered allocation failed is an
// ErrAllocFailed error.
func (b *Buffer) Close(ctx context.Context) error { return b.core().Close(ctx) }

// DevicePtr is the buffer's device address, for kernel arguments built by hand. The address of a
// stream-ordered allocation (alloc.MallocAsync) is known once the device's actor has run the
// allocation, shortly after MallocAsync returns: until then DevicePtr waits for it (not for the
// GPU), until ctx ends. It returns an ErrAllocFailed error, wrapping the cause, when that
// allocation failed. A buffer from MallocBytes has its address at once.
func (b *Buffer) DevicePtr(ctx context.Context) (cuda.DevicePtr, error) {
	return b.core().DevicePtr(ctx)
}

// Size is the buffer's length in bytes.
func (b *Buffer) Size() uint64 { return b.core().Size() }

// Device is the device the buffer lives on.
func (b *Buffer) Device() *Device { return (*Device)(b.core().Device()) }

// Closed reports whether Close (or a stream-ordered free) has run.
func (b *Buffer) Closed() bool { return b.core().Closed() }

// Slice is the byte range [off, off+n) of the buffer.
func (b *Buffer) Slice(off, n uint64) Slice { return Range(b, off, n) }

// Buffer is the buffer the slice views.
func (s Slice) Buffer() *Buffer {
	b, _, _ := core.Region(s)
	return (*Buffer)(b)
}

// Offset is where the slice starts in its buffer, in bytes.
func (s Slice) Offset() uint64 {
	_, off, _ := core.Region(s)
	return off
}

// Size is the slice's length in bytes.
func (s Slice) Size() uint64 {
	_, _, n := core.Region(s)
	return n
}

// Range is the byte range [off, off+n) of m (a *Buffer, a Slice, or a typed buffer), checked
// when used like any Slice. Ranging a Slice is relative to the Slice's start.
func Range(m Mem, off, n uint64) Slice { return Slice{core.RangeOf(m, off, n)} }

// Size is the length in bytes of m (a *Buffer, a Slice, or a typed buffer); 0 for nil.
func Size(m Mem) uint64 {
	_, _, n := core.Region(m)
	return n
}
