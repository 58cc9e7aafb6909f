package interop

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// ExternalMemory is memory another API exported and ImportMemory imported into a device.
// MapBuffer makes buffers of it; Close destroys it. Its methods are safe for concurrent use.
type ExternalMemory struct {
	dev    *core.Device
	h      backend.ExternalMemory
	size   uint64
	closed atomic.Bool                 // set on the actor thread
	mapped map[*device.Buffer]struct{} // open mapped buffers; actor thread only
}

// ImportOption configures ImportMemory.
type ImportOption func(*importConfig)

type importConfig struct{ flags uint32 }

// Dedicated says the memory is a dedicated allocation of the exporting API (Vulkan memory
// allocated with VkMemoryDedicatedAllocateInfo): cudaExternalMemoryDedicated. The import fails
// when this does not match how the memory was allocated.
func Dedicated() ImportOption {
	return func(c *importConfig) { c.flags |= backend.ExternalMemoryDedicated }
}

// ImportMemory imports size bytes of memory exported as an opaque POSIX file descriptor
// (Vulkan's VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT, the driver API's
// CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) into dev; it returns once the runtime has imported
// it. size must be the exported allocation's size.
//
// fd stays the caller's: the runtime takes ownership of the descriptor it imports, so
// ImportMemory gives it a duplicate (close-on-exec) and the caller closes fd when it likes. A
// closed or invalid fd, or size 0, is an ErrInvalidArgument error; the simulator's refusal an
// ErrExternalNotSupported error.
//
// Close the memory with Close, or let dev's Close destroy it (after its mapped buffers).
func ImportMemory(ctx context.Context, dev *device.Device, fd int, size uint64, opts ...ImportOption) (*ExternalMemory, error) {
	if dev == nil {
		return nil, core.Invalid("ImportMemory on a nil device")
	}
	if size == 0 {
		return nil, core.Invalid("ImportMemory of 0 bytes")
	}
	var c importConfig
	for _, o := range opts {
		o(&c)
	}
	dup, err := dupFD("ImportMemory", fd)
	if err != nil {
		return nil, err
	}
	claim := &fdClaim{fd: dup}
	defer claim.abandon()
	cd := (*core.Device)(dev)
	return core.Make(ctx, cd, func(rt backend.Device, tr *core.Tracker) (*ExternalMemory, error) {
		if !claim.take() {
			return nil, context.Canceled
		}
		h, err := rt.ImportExternalMemoryFD(dup, size, c.flags)
		if err != nil {
			closeFD(dup) // refused: the runtime did not take it
			return nil, externalError("ImportMemory", err)
		}
		m := &ExternalMemory{dev: cd, h: h, size: size, mapped: map[*device.Buffer]struct{}{}}
		tr.Own(m, func() error { return m.destroy(rt) })
		return m, nil
	}, func(rt backend.Device, tr *core.Tracker, m *ExternalMemory) {
		tr.Disown(m)
		_ = m.destroy(rt)
	})
}

// Size is the size of the imported memory in bytes.
func (m *ExternalMemory) Size() uint64 { return m.size }

// Device is the device the memory is imported into.
func (m *ExternalMemory) Device() *device.Device { return (*device.Device)(m.dev) }

// MapBuffer maps bytes [offset, offset+size) of the memory into its device and returns them as
// a buffer that copies, memsets and kernels of the device take like any other; it returns once
// the runtime has mapped them. offset must be a multiple of the exporting API's alignment
// (the runtime refuses others). A range past the memory's end is an ErrOutOfRange error, size
// 0 an ErrInvalidArgument error, and mapping closed memory an ErrClosed error.
//
// The buffer's Close frees the mapping (cudaFree), after the work queued on the device so far;
// the memory's Close closes every buffer still open first.
func (m *ExternalMemory) MapBuffer(ctx context.Context, offset, size uint64) (*device.Buffer, error) {
	if m == nil {
		return nil, core.Invalid("MapBuffer of nil external memory")
	}
	if size == 0 {
		return nil, core.Invalid("MapBuffer of 0 bytes")
	}
	if offset > m.size || size > m.size-offset {
		return nil, core.OutOfRange("MapBuffer of bytes [%d, %d) of %d-byte external memory", offset, offset+size, m.size)
	}
	cd := m.dev
	return core.Make(ctx, cd, func(rt backend.Device, _ *core.Tracker) (*device.Buffer, error) {
		if m.closed.Load() {
			return nil, core.Closed("MapBuffer of external memory after its Close")
		}
		p, err := rt.ExternalMemoryMappedBuffer(m.h, offset, size)
		if err != nil {
			return nil, externalError("MapBuffer", err)
		}
		if err := cd.Charge(core.KindImported, size); err != nil { // not limited: never refused
			return nil, errors.Join(err, rt.Free(p))
		}
		b := new(device.Buffer)
		m.mapped[b] = struct{}{}
		cd.Adopt((*core.Buffer)(b), p, size, core.KindImported, func(rt backend.Device, p cuda.DevicePtr, _ backend.Stream) error {
			delete(m.mapped, b)
			return externalError("freeing a mapped buffer", rt.Free(p))
		})
		return b, nil
	}, func(_ backend.Device, _ *core.Tracker, b *device.Buffer) { _ = cd.FreeNow((*core.Buffer)(b)) })
}

// Close closes the buffers MapBuffer made that are still open (each after the work queued on
// the device so far, as their Close does), then destroys the imported memory
// (cudaDestroyExternalMemory); it returns once it is destroyed. The exporter's memory lives on
// until the exporter frees it. Closing twice is an ErrClosed error. If ctx ends first, the rest
// is left to the device's Close.
func (m *ExternalMemory) Close(ctx context.Context) error {
	if m == nil {
		return core.Invalid("Close of nil external memory")
	}
	cd := m.dev
	open, err := core.Run(ctx, cd, func(_ backend.Device, _ *core.Tracker) ([]*device.Buffer, error) {
		if m.closed.Load() {
			return nil, core.Closed("external memory closed twice")
		}
		m.closed.Store(true) // MapBuffer refuses from here on
		open := make([]*device.Buffer, 0, len(m.mapped))
		for b := range m.mapped {
			open = append(open, b)
		}
		return open, nil
	}).Await(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, b := range open {
		if err := b.Close(ctx); err != nil && !errors.Is(err, core.ErrClosed) { // closed meanwhile by its holder: fine
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return core.Do(ctx, cd, func(rt backend.Device, tr *core.Tracker) error {
		tr.Disown(m)
		return m.destroy(rt)
	})
}

// destroy frees the mapped buffers still open, at once, and destroys the memory: when the
// device closes (its streams drained), or from Close once the buffers are closed. Actor
// thread only.
func (m *ExternalMemory) destroy(rt backend.Device) error {
	m.closed.Store(true)
	var errs []error
	for b := range m.mapped {
		errs = append(errs, m.dev.FreeNow((*core.Buffer)(b)))
	}
	errs = append(errs, externalError("destroying external memory", rt.DestroyExternalMemory(m.h)))
	return errors.Join(errs...)
}
