package interop

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// ExternalMemory is memory another API exported and ImportMemory imported into a device.
// MapBuffer and MapMipmappedArray make buffers and mipmapped arrays of it; Close destroys it.
// Its methods are safe for concurrent use.
type ExternalMemory struct {
	dev    *core.Device
	h      backend.ExternalMemory
	size   uint64
	closed atomic.Bool                       // set on the actor thread
	mapped map[*device.Buffer]struct{}       // open mapped buffers; actor thread only
	arrays map[*core.MipmappedArray]struct{} // open mapped mipmapped arrays; actor thread only
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
		m := &ExternalMemory{dev: cd, h: h, size: size, mapped: map[*device.Buffer]struct{}{}, arrays: map[*core.MipmappedArray]struct{}{}}
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

// MapMipmappedArray maps a mipmapped array of levels levels of format, level 0 of extent,
// whose base level starts offset bytes into the memory (cudaExternalMemoryGetMappedMipmappedArray),
// and returns once it is mapped: how an image another API exported (a Vulkan image of optimal
// tiling) reaches CUDA's copies, textures and surfaces. format, extent, levels and opts must
// describe the image as its exporter laid it out, ColorAttachment included when the image is
// a color target there; the runtime cannot check that the bytes are such an image, and reads
// whatever the memory holds. As NewMipmappedArray does, more levels than 1+log2 of the largest
// extent are clamped (Levels says how many there are).
//
// A bad extent or format, levels below 1 or an offset past the memory's end is an
// ErrInvalidArgument or ErrOutOfRange error, mapping closed memory an ErrClosed error, and a
// layout the memory cannot hold the runtime's error; the memory and the device stay usable.
//
// The mipmapped array's Close frees the mapping (cudaFreeMipmappedArray), after the work
// queued on the device so far; the memory's Close closes every mipmapped array still open
// first.
func (m *ExternalMemory) MapMipmappedArray(ctx context.Context, offset uint64, format cuda.ChannelFormat, extent alloc.Extent, levels int, opts ...alloc.ArrayOption) (*alloc.MipmappedArray, error) {
	if m == nil {
		return nil, core.Invalid("MapMipmappedArray of nil external memory")
	}
	if err := format.Validate(); err != nil {
		return nil, core.Invalid("MapMipmappedArray: %v", err)
	}
	e, err := core.MipShape("MapMipmappedArray", extent.W, extent.H, extent.D, levels)
	if err != nil {
		return nil, err
	}
	if offset >= m.size {
		return nil, core.OutOfRange("MapMipmappedArray at offset %d of %d-byte external memory", offset, m.size)
	}
	var flags alloc.ArrayFlags
	for _, o := range opts {
		o(&flags)
	}
	cd := m.dev
	mm, err := core.Make(ctx, cd, func(rt backend.Device, _ *core.Tracker) (*core.MipmappedArray, error) {
		if m.closed.Load() {
			return nil, core.Closed("MapMipmappedArray of external memory after its Close")
		}
		h, err := rt.ExternalMemoryMappedMipmappedArray(m.h, offset, format, e, uint32(levels), uint32(flags))
		if err != nil {
			return nil, externalError("MapMipmappedArray", err)
		}
		info := backend.ArrayInfo{Format: format, Extent: e, Flags: uint32(flags)}
		var a *core.MipmappedArray
		a = cd.AdoptMipmappedArray(h, info, int(core.MipLevels(e, uint32(flags), uint32(levels))), func() { delete(m.arrays, a) })
		m.arrays[a] = struct{}{}
		return a, nil
	}, func(_ backend.Device, _ *core.Tracker, a *core.MipmappedArray) { _ = a.FreeNow() })
	return (*alloc.MipmappedArray)(mm), err
}

// Close closes the buffers and mipmapped arrays MapBuffer and MapMipmappedArray made that are
// still open (each after the work queued on the device so far, as their Close does), then
// destroys the imported memory (cudaDestroyExternalMemory); it returns once it is destroyed.
// The exporter's memory lives on until the exporter frees it. Closing twice is an ErrClosed
// error. If ctx ends first, the rest is left to the device's Close.
func (m *ExternalMemory) Close(ctx context.Context) error {
	if m == nil {
		return core.Invalid("Close of nil external memory")
	}
	cd := m.dev
	type closer interface{ Close(context.Context) error }
	open, err := core.Run(ctx, cd, func(_ backend.Device, _ *core.Tracker) ([]closer, error) {
		if m.closed.Load() {
			return nil, core.Closed("external memory closed twice")
		}
		m.closed.Store(true) // MapBuffer and MapMipmappedArray refuse from here on
		open := make([]closer, 0, len(m.mapped)+len(m.arrays))
		for b := range m.mapped {
			open = append(open, b)
		}
		for a := range m.arrays {
			open = append(open, a)
		}
		return open, nil
	}).Await(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range open {
		if err := c.Close(ctx); err != nil && !errors.Is(err, core.ErrClosed) { // closed meanwhile by its holder: fine
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

// destroy frees the mapped buffers and mipmapped arrays still open, at once, and destroys the memory: when the
// device closes (its streams drained), or from Close once the buffers are closed. Actor
// thread only.
func (m *ExternalMemory) destroy(rt backend.Device) error {
	m.closed.Store(true)
	var errs []error
	for b := range m.mapped {
		errs = append(errs, m.dev.FreeNow((*core.Buffer)(b)))
	}
	for a := range m.arrays {
		errs = append(errs, a.FreeNow()) // deletes a from m.arrays
	}
	errs = append(errs, externalError("destroying external memory", rt.DestroyExternalMemory(m.h)))
	return errors.Join(errs...)
}
