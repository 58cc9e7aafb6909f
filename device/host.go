package device

import (
	"context"
	"unsafe"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// HostFlag is a cudaHostAlloc flag.
type HostFlag uint32

// Pinned host allocation flags.
const (
	HostPortable      = HostFlag(backend.HostAllocPortable)      // pinned for every device, not only this one
	HostMapped        = HostFlag(backend.HostAllocMapped)        // mapped into the device's address space
	HostWriteCombined = HostFlag(backend.HostAllocWriteCombined) // fast for the device to read, slow for the CPU to read
)

// HostBuffer is page-locked (pinned) host memory: copies to and from it run at full link
// speed, and a stream's copies may read or write it after the call that queued them returns.
// Its bytes live outside the Go heap; do not use Host after Close.
type HostBuffer core.HostBuffer

func (h *HostBuffer) core() *core.HostBuffer { return (*core.HostBuffer)(h) }

// MallocPinnedBytes allocates size bytes of pinned host memory (cudaHostAlloc); it returns
// once they are allocated. It is the untyped form of alloc.MallocPinned, which allocates
// elements of a type.
func (d *Device) MallocPinnedBytes(ctx context.Context, size uint64, flags ...HostFlag) (*HostBuffer, error) {
	if d == nil {
		return nil, core.Invalid("MallocPinnedBytes on a nil device")
	}
	var f uint32
	for _, fl := range flags {
		f |= uint32(fl)
	}
	h, err := core.MallocHost(ctx, d.core(), size, f)
	return (*HostBuffer)(h), err
}

// Host is the buffer's memory, or nil once closed.
func (h *HostBuffer) Host() []byte { return h.core().Host() }

// DevicePtr is the address kernels use for the buffer's memory (cudaHostGetDevicePointer):
// a kernel given it as an argument reads and writes the host's bytes directly (zero copy),
// and the host sees its writes once the kernel's stream is done. Under unified addressing all
// pinned memory is mapped, HostMapped or not, and the address equals the host address, except
// for HostWriteCombined memory. On an isolated device it is the worker's address of the memory
// both processes share. It returns once the device's actor has asked the runtime; after Close
// it is an ErrClosed error.
func (h *HostBuffer) DevicePtr(ctx context.Context) (cuda.DevicePtr, error) {
	return h.core().DevicePtr(ctx)
}

// Size is the buffer's length in bytes.
func (h *HostBuffer) Size() uint64 { return h.core().Size() }

// Device is the device the memory was pinned for.
func (h *HostBuffer) Device() *Device { return (*Device)(h.core().Device()) }

// Closed reports whether Close has run.
func (h *HostBuffer) Closed() bool { return h.core().Closed() }

// Close frees the pinned memory after the work queued on the device's own stream has
// finished, and returns once it is freed. Closing twice is an ErrClosed error.
func (h *HostBuffer) Close(ctx context.Context) error { return h.core().Close(ctx) }

// HostSlice views a pinned host buffer as a slice of T (len = Size / sizeof(T)); nil once the
// buffer is closed.
func HostSlice[T cuda.Numeric](h *HostBuffer) []T {
	b := h.Host()
	var zero T
	n := len(b) / int(unsafe.Sizeof(zero))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}
