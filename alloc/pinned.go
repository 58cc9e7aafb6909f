package alloc

import (
	"context"
	"unsafe"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Pinned is Len elements of T in page-locked host memory (cudaHostAlloc), which copies move
// at full link speed and async copies may use. It embeds the *device.HostBuffer it is made
// of, so streams' copies take it, and its Size and DevicePtr. Its memory is C's, not Go's: do
// not keep Host past Close.
type Pinned[T any] struct {
	*device.HostBuffer
	n    int
	pool *PinnedPool // non-nil when it came from GetPinned
}

// PinnedFlag is a cudaHostAlloc flag.
type PinnedFlag = device.HostFlag

// Pinned allocation flags.
const (
	Portable      = device.HostPortable      // pinned for every device, not only this one
	Mapped        = device.HostMapped        // addressable by the device (DevicePtr)
	WriteCombined = device.HostWriteCombined // fast for the device to read, slow for the CPU to read
)

// MallocPinned allocates n elements of T of pinned host memory for d; it returns once they are
// allocated.
func MallocPinned[T any](ctx context.Context, d *device.Device, n int, flags ...PinnedFlag) (*Pinned[T], error) {
	if d == nil {
		return nil, core.Invalid("MallocPinned on a nil device")
	}
	size, err := elemSize[T]()
	if err != nil {
		return nil, err
	}
	bytes, err := byteCount("MallocPinned", n, size)
	if err != nil {
		return nil, err
	}
	h, err := d.MallocPinnedBytes(ctx, bytes, flags...)
	if err != nil {
		return nil, err
	}
	return &Pinned[T]{HostBuffer: h, n: n}, nil
}

// GetPinned takes pinned memory for n elements of T from d's reusable PinnedPool, allocating
// only when the pool has none of that size. Hand it back with Close.
func GetPinned[T any](ctx context.Context, d *device.Device, n int) (*Pinned[T], error) {
	if d == nil {
		return nil, core.Invalid("GetPinned on a nil device")
	}
	size, err := elemSize[T]()
	if err != nil {
		return nil, err
	}
	bytes, err := byteCount("GetPinned", n, size)
	if err != nil {
		return nil, err
	}
	pool := PinnedPoolOf(d)
	h, err := pool.Get(ctx, bytes)
	if err != nil {
		return nil, err
	}
	return &Pinned[T]{HostBuffer: h, n: n, pool: pool}, nil
}

// Len is the number of elements (0 for a nil buffer).
func (p *Pinned[T]) Len() int {
	if p == nil {
		return 0
	}
	return p.n
}

// Size is the buffer's length in bytes (0 for a nil buffer).
func (p *Pinned[T]) Size() uint64 {
	if p == nil {
		return 0
	}
	return p.HostBuffer.Size()
}

// Device is the device the memory was pinned for (nil for a nil buffer).
func (p *Pinned[T]) Device() *device.Device {
	if p == nil {
		return nil
	}
	return p.HostBuffer.Device()
}

// Closed reports whether the memory was given back; a nil buffer counts as closed.
func (p *Pinned[T]) Closed() bool { return p == nil || p.HostBuffer.Closed() }

// DevicePtr is the address kernels use for the memory (pinned mapped); see
// device.HostBuffer.DevicePtr. A nil buffer is an ErrInvalidArgument error.
func (p *Pinned[T]) DevicePtr(ctx context.Context) (cuda.DevicePtr, error) {
	if p == nil {
		return 0, core.Invalid("DevicePtr of a nil pinned buffer")
	}
	return p.HostBuffer.DevicePtr(ctx)
}

// Host is the memory as a []T, or nil once released (or for a nil buffer).
func (p *Pinned[T]) Host() []T {
	if p == nil {
		return nil
	}
	b := p.HostBuffer.Host()
	if b == nil {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), p.n)
}

// Close gives the memory back: to the pool it came from (GetPinned), at once, or to the
// system, returning once it is freed.
func (p *Pinned[T]) Close(ctx context.Context) error {
	if p == nil || p.HostBuffer == nil {
		return core.Invalid("Close of a nil pinned buffer")
	}
	if p.pool != nil {
		return p.pool.Put(ctx, p.HostBuffer)
	}
	return p.HostBuffer.Close(ctx)
}

// Flags are the flags the buffer was allocated with (cudaHostGetFlags), as
// device.HostBuffer.Flags reports them; an error for a nil buffer.
func (p *Pinned[T]) Flags(ctx context.Context) (PinnedFlag, error) {
	if p == nil {
		return 0, core.Invalid("Flags of a nil pinned buffer")
	}
	return p.HostBuffer.Flags(ctx)
}
