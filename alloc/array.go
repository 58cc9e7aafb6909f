package alloc

import (
	"context"
	"math"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Array is a CUDA array on one device (cudaArray_t): elements of one channel format in a
// layout only the device knows, which textures sample and surfaces read and write. It is
// 1D (Extent H and D 0), 2D (D 0), 3D, layered (D counts layers) or a cubemap (D is 6 faces,
// 6 per layer when layered). Its elements are reached only through copies (CopyToArray,
// CopyFromArray, CopyArray, the pitched and device-memory copies) and, by kernels, through
// texture and surface objects. Its methods are safe for concurrent use.
type Array core.Array

// Extent is the size of an array in elements: W wide, H high (0 for a 1D array), D deep (0
// for a 2D array; the layers of a layered one; 6 faces per layer of a cubemap).
type Extent struct{ W, H, D int }

// ArrayFlags are what an array was made for (cudaArray* flags).
type ArrayFlags uint32

// The array flags, as the runtime defines them.
const (
	ArrayLayered          = ArrayFlags(backend.ArrayLayered)
	ArraySurfaceLoadStore = ArrayFlags(backend.ArraySurfaceLoadStore)
	ArrayCubemap          = ArrayFlags(backend.ArrayCubemap)
	ArrayTextureGather    = ArrayFlags(backend.ArrayTextureGather)
	ArraySparse           = ArrayFlags(backend.ArraySparse)
	ArrayDeferredMapping  = ArrayFlags(backend.ArrayDeferredMapping)
	ArrayColorAttachment  = ArrayFlags(backend.ArrayColorAttachment)
)

// ArrayOption sets a flag of NewArray and NewMipmappedArray.
type ArrayOption func(*ArrayFlags)

func withFlag(f ArrayFlags) ArrayOption { return func(fl *ArrayFlags) { *fl |= f } }

// Layered makes a layered array: D counts its layers of W×H (or W, when H is 0) elements.
func Layered() ArrayOption { return withFlag(ArrayLayered) }

// Cubemap makes a cubemap: W == H, D 6 faces (6 per layer with Layered).
func Cubemap() ArrayOption { return withFlag(ArrayCubemap) }

// SurfaceLoadStore lets surface objects bind the array, for kernels to write it.
func SurfaceLoadStore() ArrayOption { return withFlag(ArraySurfaceLoadStore) }

// TextureGather lets textures gather from the array (2D arrays only).
func TextureGather() ArrayOption { return withFlag(ArrayTextureGather) }

// Sparse makes a sparse array, whose tiles are mapped later (SparseProperties).
func Sparse() ArrayOption { return withFlag(ArraySparse) }

// DeferredMapping makes an array whose memory is mapped later (MemoryRequirements).
func DeferredMapping() ArrayOption { return withFlag(ArrayDeferredMapping) }

// ColorAttachment says a mipmapped array mapped from imported memory
// (interop.ExternalMemory.MapMipmappedArray) is a color target of the graphics API that
// exported it, as the runtime requires of such images. NewArray and NewMipmappedArray refuse
// it.
func ColorAttachment() ArrayOption { return withFlag(ArrayColorAttachment) }

// madeFlags checks flags for an array NewArray or NewMipmappedArray makes.
func madeFlags(op string, flags ArrayFlags) error {
	if flags&ArrayColorAttachment != 0 {
		return core.Invalid("%s with ColorAttachment: only a mipmapped array mapped from imported memory is a color target", op)
	}
	return nil
}

// backendExtent checks e and converts it to the runtime's extent.
func backendExtent(op string, e Extent) (backend.Extent3D, error) {
	return core.ArrayExtent(op, e.W, e.H, e.D)
}

// NewArray allocates an array of extent elements of format on d (cudaMallocArray, or
// cudaMalloc3DArray for 3D, layered and cubemap arrays) and returns once it is allocated.
// A format Validate refuses is an ErrInvalidArgument error; a shape the device refuses
// (a cubemap not square, a layered array without layers, past the device's limits) is the
// runtime's error, cudaerr.InvalidValue. Free it with Close.
func NewArray(ctx context.Context, d *device.Device, format cuda.ChannelFormat, extent Extent, opts ...ArrayOption) (*Array, error) {
	if d == nil {
		return nil, core.Invalid("NewArray on a nil device")
	}
	e, err := backendExtent("NewArray", extent)
	if err != nil {
		return nil, err
	}
	var flags ArrayFlags
	for _, o := range opts {
		o(&flags)
	}
	if err := madeFlags("NewArray", flags); err != nil {
		return nil, err
	}
	a, err := core.NewArray(ctx, coreDev(d), format, e, uint32(flags))
	return (*Array)(a), err
}

func (a *Array) core() *core.Array { return (*core.Array)(a) }

// Format is the array's element format.
func (a *Array) Format() cuda.ChannelFormat { return a.core().Info().Format }

// Extent is the array's extent, as it was made.
func (a *Array) Extent() Extent {
	e := a.core().Info().Extent
	return Extent{W: int(e.Width), H: int(e.Height), D: int(e.Depth)}
}

// Flags are the flags the array was made with.
func (a *Array) Flags() ArrayFlags { return ArrayFlags(a.core().Info().Flags) }

// Device is the device the array lives on.
func (a *Array) Device() *device.Device { return (*device.Device)(a.core().Device()) }

// Whole is the box of all of the array: its extent with unused extents as 1.
func (a *Array) Whole() Box {
	e := a.Extent()
	return Box{W: e.W, H: max(e.H, 1), D: max(e.D, 1)}
}

// ArrayInfo is what the runtime says of an array (cudaArrayGetInfo).
type ArrayInfo struct {
	Format cuda.ChannelFormat
	Extent Extent
	Flags  ArrayFlags
}

// Info asks the runtime for the array's format, extent and flags (cudaArrayGetInfo) and
// returns once it has answered.
func (a *Array) Info(ctx context.Context) (ArrayInfo, error) {
	return core.Query(ctx, a.core(), "Info", func(rt backend.Device, h backend.Array) (ArrayInfo, error) {
		i, err := rt.ArrayInfo(h)
		return ArrayInfo{Format: i.Format, Flags: ArrayFlags(i.Flags),
			Extent: Extent{W: clampInt(i.Extent.Width), H: clampInt(i.Extent.Height), D: clampInt(i.Extent.Depth)}}, err
	})
}

func clampInt(x uint64) int { return int(min(x, math.MaxInt)) }

// ChannelFormat asks the runtime for the array's element format (cudaGetChannelDesc).
func (a *Array) ChannelFormat(ctx context.Context) (cuda.ChannelFormat, error) {
	return core.Query(ctx, a.core(), "ChannelFormat", func(rt backend.Device, h backend.Array) (cuda.ChannelFormat, error) {
		return rt.ChannelDesc(h)
	})
}

// Plane is plane i of a multi-planar array (cudaArrayGetPlane). gpuactor's channel formats
// are single-planar, so the runtime refuses every plane of the arrays NewArray makes with
// cudaerr.InvalidValue; Plane is here for completeness of the runtime's API.
func (a *Array) Plane(ctx context.Context, i int) (*Array, error) {
	if i < 0 {
		return nil, core.Invalid("Plane %d: planes count from 0", i)
	}
	_, err := core.Query(ctx, a.core(), "Plane", func(rt backend.Device, h backend.Array) (backend.Array, error) {
		return rt.ArrayPlane(h, uint32(i))
	})
	if err == nil {
		return nil, core.Invalid("Plane %d: the runtime gave a plane of a single-planar array", i)
	}
	return nil, err
}

// MemoryRequirements is the backing memory an array made with DeferredMapping needs
// (cudaArrayMemoryRequirements).
type MemoryRequirements struct {
	Size, Alignment uint64
}

// MemoryRequirements asks the runtime what memory the array needs once mapped
// (cudaArrayGetMemoryRequirements); an array made without DeferredMapping is the runtime's
// cudaerr.InvalidValue.
func (a *Array) MemoryRequirements(ctx context.Context) (MemoryRequirements, error) {
	return core.Query(ctx, a.core(), "MemoryRequirements", func(rt backend.Device, h backend.Array) (MemoryRequirements, error) {
		r, err := rt.ArrayMemoryRequirements(h)
		return MemoryRequirements(r), err
	})
}

// SparseProperties is the tile layout of a sparse array (cudaArraySparseProperties).
type SparseProperties struct {
	TileWidth, TileHeight, TileDepth int // elements of one tile
	MiptailFirstLevel                int // the first mip level in the mip tail
	MiptailSize                      uint64
	SingleMiptail                    bool // one mip tail for all layers
}

func sparseProps(p backend.ArraySparseProperties) SparseProperties {
	return SparseProperties{TileWidth: int(p.TileWidth), TileHeight: int(p.TileHeight), TileDepth: int(p.TileDepth),
		MiptailFirstLevel: int(p.MiptailFirstLevel), MiptailSize: p.MiptailSize, SingleMiptail: p.Flags&backend.ArraySparseSingleMipTail != 0}
}

// SparseProperties asks the runtime for the tile layout of an array made with Sparse
// (cudaArrayGetSparseProperties); another array is the runtime's cudaerr.InvalidValue.
func (a *Array) SparseProperties(ctx context.Context) (SparseProperties, error) {
	return core.Query(ctx, a.core(), "SparseProperties", func(rt backend.Device, h backend.Array) (SparseProperties, error) {
		p, err := rt.ArraySparseProperties(h)
		return sparseProps(p), err
	})
}

// Close frees the array once the work queued on its device so far has finished, and returns
// once it is freed. Closing a mipmap level is an ErrInvalidArgument error (it is freed with
// its MipmappedArray), closing twice device.ErrClosed; every use of a freed array is
// refused with device.ErrClosed.
func (a *Array) Close(ctx context.Context) error { return a.core().Close(ctx) }

// MipmappedArray is a mipmapped CUDA array (cudaMipmappedArray_t): levels of one format, each
// half the one before it in every extent but the layers (never below 1). Each level is an
// Array (Level) that lives as long as the mipmapped array. Its methods are safe for
// concurrent use.
type MipmappedArray core.MipmappedArray

// NewMipmappedArray allocates levels mipmap levels of format on d, level 0 of extent
// (cudaMallocMipmappedArray), and returns once they are allocated. levels must be at least
// 1; as the runtime does, more levels than 1+log2 of the largest extent (not counting layers)
// are clamped to that many, the last level 1×1: Levels says how many were made. Free it with
// Close.
func NewMipmappedArray(ctx context.Context, d *device.Device, format cuda.ChannelFormat, extent Extent, levels int, opts ...ArrayOption) (*MipmappedArray, error) {
	if d == nil {
		return nil, core.Invalid("NewMipmappedArray on a nil device")
	}
	e, err := core.MipShape("NewMipmappedArray", extent.W, extent.H, extent.D, levels)
	if err != nil {
		return nil, err
	}
	var flags ArrayFlags
	for _, o := range opts {
		o(&flags)
	}
	if err := madeFlags("NewMipmappedArray", flags); err != nil {
		return nil, err
	}
	m, err := core.NewMipmappedArray(ctx, coreDev(d), format, e, uint32(levels), uint32(flags))
	return (*MipmappedArray)(m), err
}

func (m *MipmappedArray) core() *core.MipmappedArray { return (*core.MipmappedArray)(m) }

// Levels is the number of levels.
func (m *MipmappedArray) Levels() int { return m.core().Levels() }

// Format is the levels' element format.
func (m *MipmappedArray) Format() cuda.ChannelFormat { return m.core().Info().Format }

// Extent is level 0's extent.
func (m *MipmappedArray) Extent() Extent {
	e := m.core().Info().Extent
	return Extent{W: int(e.Width), H: int(e.Height), D: int(e.Depth)}
}

// Flags are the flags the mipmapped array was made with.
func (m *MipmappedArray) Flags() ArrayFlags { return ArrayFlags(m.core().Info().Flags) }

// Device is the device the mipmapped array lives on.
func (m *MipmappedArray) Device() *device.Device { return (*device.Device)(m.core().Device()) }

// Level is level i as an Array (cudaGetMipmappedArrayLevel), for copies, textures and
// surfaces; it returns once the runtime has answered, the same *Array every time. It is
// freed with m. An i outside [0, Levels) is a device.ErrOutOfRange error.
func (m *MipmappedArray) Level(ctx context.Context, i int) (*Array, error) {
	a, err := m.core().Level(ctx, i)
	return (*Array)(a), err
}

// MemoryRequirements asks the runtime what memory a mipmapped array made with
// DeferredMapping needs once mapped (cudaMipmappedArrayGetMemoryRequirements).
func (m *MipmappedArray) MemoryRequirements(ctx context.Context) (MemoryRequirements, error) {
	return core.QueryMipmapped(ctx, m.core(), "MemoryRequirements", func(rt backend.Device, h backend.MipmappedArray) (MemoryRequirements, error) {
		r, err := rt.MipmappedArrayMemoryRequirements(h)
		return MemoryRequirements(r), err
	})
}

// SparseProperties asks the runtime for the tile layout and mip tail of a mipmapped array
// made with Sparse (cudaMipmappedArrayGetSparseProperties).
func (m *MipmappedArray) SparseProperties(ctx context.Context) (SparseProperties, error) {
	return core.QueryMipmapped(ctx, m.core(), "SparseProperties", func(rt backend.Device, h backend.MipmappedArray) (SparseProperties, error) {
		p, err := rt.MipmappedArraySparseProperties(h)
		return sparseProps(p), err
	})
}

// Close frees the mipmapped array and its levels once the work queued on its device so far
// has finished, and returns once they are freed.
func (m *MipmappedArray) Close(ctx context.Context) error { return m.core().Close(ctx) }
