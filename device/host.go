package device

import (
	"context"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// HostFlag is a cudaHostAlloc flag.
type HostFlag uint32

// Pinned host allocation flags.
const (
	HostPortable      = HostFlag(backend.HostAllocPortable)      // pinned for every device, not only this one
	HostMapped        = HostFlag(backend.HostAllocMapped)        // mapped into the device's address space
	HostWriteCombined = HostFlag(backend.HostAllocWriteCombined) // fast for the device to read, slow for the CPU to read
)

// HostBuffer is page-locked (pinned) host memory: copies to and from it run at full PCIe
// speed. Its bytes live outside the Go heap; do not use Bytes after Free.
type HostBuffer struct {
	dev   *Device
	p     unsafe.Pointer
	size  uint64
	freed atomic.Bool
}

// MallocHost allocates size bytes of pinned host memory.
func (d *Device) MallocHost(ctx context.Context, size uint64, flags ...HostFlag) (*HostBuffer, error) {
	if size == 0 {
		return nil, invalid("MallocHost of 0 bytes")
	}
	var f uint32
	for _, fl := range flags {
		f |= uint32(fl)
	}
	return call(ctx, d, func() (*HostBuffer, error) {
		if err := d.Charge(KindPinned, size); err != nil {
			return nil, err
		}
		p, err := d.dev.HostAlloc(size, f)
		if err != nil {
			d.Uncharge(KindPinned, size)
			return nil, fmt.Errorf("gpuactor: MallocHost(%d bytes): %w", size, err)
		}
		h := &HostBuffer{dev: d, p: p, size: size}
		d.live.hosts[h] = struct{}{}
		return h, nil
	}).Await(ctx)
}

// Bytes is the buffer's memory, or nil once freed.
func (h *HostBuffer) Bytes() []byte {
	if h == nil || h.freed.Load() {
		return nil
	}
	return unsafe.Slice((*byte)(h.p), h.size)
}

// Size is the buffer's length in bytes.
func (h *HostBuffer) Size() uint64 { return h.size }

// Free releases the pinned memory. Freeing twice is an ErrFreed error.
func (h *HostBuffer) Free(ctx context.Context) error {
	if h == nil {
		return invalid("Free of a nil host buffer")
	}
	return do(ctx, h.dev, func() error { return h.dev.freeHost(h) })
}

// freeHost runs on the actor thread.
func (d *Device) freeHost(h *HostBuffer) error {
	if h.freed.Load() {
		return freedErr("host buffer of %d bytes freed twice", h.size)
	}
	if err := d.dev.StreamSynchronize(d.stream); err != nil {
		return err
	}
	h.freed.Store(true)
	delete(d.live.hosts, h)
	d.Uncharge(KindPinned, h.size)
	return d.dev.HostFree(h.p)
}

// HostSlice views a pinned host buffer as a slice of T (len = Size / sizeof(T)).
func HostSlice[T Numeric](h *HostBuffer) []T {
	b := h.Bytes()
	var zero T
	n := len(b) / int(unsafe.Sizeof(zero))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}
