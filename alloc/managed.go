package alloc

import (
	"context"
	"errors"
	"fmt"
	"unsafe"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// Managed is Len elements of T in managed (unified) memory: kernels use it as device memory
// (it embeds a *device.Buffer, so it is a device.Mem) and the host reads and writes it through
// Host. The driver migrates pages to whichever side touches them; Prefetch moves them ahead
// of time. The host must not touch the memory while the GPU may be using it (wait for the
// work first).
type Managed[T any] struct {
	*device.Buffer
	n    int
	host unsafe.Pointer
	mem  device.Buffer // the embedded buffer points here
}

// ManagedOption configures MallocManaged.
type ManagedOption func(*managedConfig)

type managedConfig struct{ flags uint32 }

// AttachHost makes the memory initially reachable by the host only (cudaMemAttachHost): a
// kernel may use it only after Attach to its stream. The default is cudaMemAttachGlobal.
func AttachHost() ManagedOption { return func(c *managedConfig) { c.flags = backend.AttachHost } }

// MallocManaged allocates n elements of T of managed memory on d, and returns once they are
// allocated. A request larger than the device's free memory is refused with
// ErrOversubscribe. Free it with Close (the embedded buffer's), or let the device's Close.
func MallocManaged[T any](ctx context.Context, d *device.Device, n int, opts ...ManagedOption) (*Managed[T], error) {
	if d == nil {
		return nil, core.Invalid("MallocManaged on a nil device")
	}
	size, err := elemSize[T]()
	if err != nil {
		return nil, err
	}
	bytes, err := byteCount("MallocManaged", n, size)
	if err != nil {
		return nil, err
	}
	c := managedConfig{flags: backend.AttachGlobal}
	for _, o := range opts {
		o(&c)
	}
	cd := coreDev(d)
	return core.Make(ctx, cd, func(rt backend.Device, _ *core.Tracker) (*Managed[T], error) {
		supported, err := rt.Attribute(backend.AttrManagedMemory)
		if err != nil {
			return nil, err
		}
		if supported == 0 {
			return nil, fmt.Errorf("%w: device %d does not support managed memory", device.ErrInvalidArgument, d.Ordinal())
		}
		free, _, err := rt.MemInfo()
		if err == nil && bytes > free && core.TrimPools(rt) { // pools may hold freed memory
			free, _, err = rt.MemInfo()
		}
		if err != nil {
			return nil, err
		}
		if bytes > free {
			return nil, fmt.Errorf("%w: %d bytes requested, device %d has %d free", ErrOversubscribe, bytes, d.Ordinal(), free)
		}
		if err := cd.Charge(core.KindManaged, bytes); err != nil {
			return nil, err
		}
		p, err := core.RetryTrimmed(rt, func() (cuda.DevicePtr, error) { return rt.MallocManaged(bytes, c.flags) })
		if err != nil {
			cd.Refund(core.KindManaged, bytes)
			return nil, fmt.Errorf("gpuactor/alloc: MallocManaged(%d bytes) on device %d: %w", bytes, d.Ordinal(), err)
		}
		host, err := rt.ManagedHost(p, bytes)
		if err != nil {
			cd.Refund(core.KindManaged, bytes)
			return nil, errors.Join(err, rt.Free(p))
		}
		m := &Managed[T]{n: n, host: host}
		m.Buffer = &m.mem
		cd.Adopt((*core.Buffer)(&m.mem), p, bytes, core.KindManaged, releaseManaged)
		return m, nil
	}, func(_ backend.Device, _ *core.Tracker, m *Managed[T]) { _ = cd.FreeNow((*core.Buffer)(m.Buffer)) })
}

// releaseManaged frees managed memory, once no stream uses it any more (core.Buffer.Close).
func releaseManaged(rt backend.Device, p cuda.DevicePtr, _ backend.Stream) error {
	return rt.Free(p)
}

// Len is the number of elements (0 for a nil buffer).
func (m *Managed[T]) Len() int {
	if m == nil {
		return 0
	}
	return m.n
}

// Size is the allocation's length in bytes (0 for a nil buffer).
func (m *Managed[T]) Size() uint64 {
	if m == nil {
		return 0
	}
	return m.Buffer.Size()
}

// Device is the device the memory was allocated on (nil for a nil buffer).
func (m *Managed[T]) Device() *device.Device {
	if m == nil {
		return nil
	}
	return m.Buffer.Device()
}

// Closed reports whether the memory was freed; a nil buffer counts as closed.
func (m *Managed[T]) Closed() bool { return m == nil || m.Buffer.Closed() }

// DevicePtr is the address kernels use for the memory. A nil buffer is an
// ErrInvalidArgument error.
func (m *Managed[T]) DevicePtr(ctx context.Context) (cuda.DevicePtr, error) {
	if m == nil {
		return 0, core.Invalid("DevicePtr of a nil managed buffer")
	}
	return m.Buffer.DevicePtr(ctx)
}

// Slice is bytes [off, off+n) of the memory as device memory; on a nil buffer, a slice that
// every operation refuses.
func (m *Managed[T]) Slice(off, n uint64) device.Slice {
	if m == nil {
		return device.Range(nil, off, n)
	}
	return m.Buffer.Slice(off, n)
}

// Close frees the memory once the GPU has passed the work queued so far on every stream of
// the device, and returns once it is freed; see device.Buffer.Close. A nil buffer is an
// ErrInvalidArgument error.
func (m *Managed[T]) Close(ctx context.Context) error {
	if m == nil {
		return core.Invalid("Close of a nil managed buffer")
	}
	return m.Buffer.Close(ctx)
}

// Host is the memory as seen by the host, or nil once freed. Do not keep it past Close.
func (m *Managed[T]) Host() []T {
	if m == nil || m.Buffer == nil || m.Closed() {
		return nil
	}
	return unsafe.Slice((*T)(m.host), m.n)
}

// Prefetch queues the migration of the whole allocation to loc on s (a stream of the
// memory's device); the future completes when the GPU reaches it. PrefetchRange moves part.
func (m *Managed[T]) Prefetch(ctx context.Context, s *streams.Stream, loc Location) *streams.Future {
	return m.PrefetchRange(ctx, s, 0, m.Len(), loc)
}

// Attach queues the attachment of the memory to s (cudaStreamAttachMemAsync): with
// AttachSingle only s's work may use it, with AttachGlobal any stream's, with AttachToHost
// only the host.
func (m *Managed[T]) Attach(ctx context.Context, s *streams.Stream, how Attachment) *streams.Future {
	return m.onStream(ctx, s, func(rt backend.Device, h backend.Stream, p cuda.DevicePtr, n uint64) error {
		if how != AttachSingle && how != AttachGlobal && how != AttachToHost {
			return core.Invalid("unknown attachment %d", uint32(how))
		}
		return rt.StreamAttachMem(h, p, n, uint32(how))
	})
}

// Attachment says which streams may use managed memory.
type Attachment uint32

// Attachments.
const (
	AttachGlobal = Attachment(backend.AttachGlobal) // any stream of any device
	AttachToHost = Attachment(backend.AttachHost)   // the host only
	AttachSingle = Attachment(backend.AttachSingle) // only the stream attached to
)

func (m *Managed[T]) onStream(ctx context.Context, s *streams.Stream, op func(rt backend.Device, h backend.Stream, p cuda.DevicePtr, n uint64) error) *streams.Future {
	if m == nil || m.Buffer == nil {
		return failed(core.Invalid("nil managed buffer"))
	}
	if s == nil {
		return failed(core.Invalid("nil stream"))
	}
	d := m.Device()
	if s.Device() != d {
		return failed(wrongDevice("managed buffer", d, s.Device()))
	}
	buf, cd := m.Buffer, coreDev(d)
	return core.Queue(ctx, (*core.Stream)(s), func(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
		p, n, err := cd.Resolve("managed buffer", buf)
		if err != nil {
			return err
		}
		return op(rt, h, p, n)
	})
}
