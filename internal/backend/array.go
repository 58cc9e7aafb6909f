package backend

import "github.com/gpuactor/gpuactor/cuda"

// Array is an opaque cudaArray_t handle: a CUDA array, whose layout only the device knows.
type Array uintptr

// MipmappedArray is an opaque cudaMipmappedArray_t handle: a chain of mipmap levels, each an
// Array.
type MipmappedArray uintptr

// ChannelFormat is a cudaChannelFormatDesc.
type ChannelFormat = cuda.ChannelFormat

// Array flags (cudaArray*), as the runtime defines them. Layered and Cubemap need a 3D
// allocation (Malloc3DArray, MallocMipmappedArray).
const (
	ArrayDefault          uint32 = 0x00 // cudaArrayDefault
	ArrayLayered          uint32 = 0x01 // cudaArrayLayered: depth counts layers
	ArraySurfaceLoadStore uint32 = 0x02 // cudaArraySurfaceLoadStore: surfaces may bind it
	ArrayCubemap          uint32 = 0x04 // cudaArrayCubemap: 6 faces (per layer), width == height
	ArrayTextureGather    uint32 = 0x08 // cudaArrayTextureGather: 2D arrays only
	ArraySparse           uint32 = 0x40 // cudaArraySparse: backed by tiles mapped later
	ArrayDeferredMapping  uint32 = 0x80 // cudaArrayDeferredMapping: memory mapped later
	// ArrayColorAttachment is cudaArrayColorAttachment: a mipmapped array mapped from
	// imported memory is a color target of the graphics API that exported it. Only
	// ExternalMemoryMappedMipmappedArray takes it.
	ArrayColorAttachment uint32 = 0x20
)

// ArrayFlagsKnown is every flag MallocArray, Malloc3DArray and MallocMipmappedArray take.
const ArrayFlagsKnown = ArrayLayered | ArraySurfaceLoadStore | ArrayCubemap | ArrayTextureGather | ArraySparse | ArrayDeferredMapping

// Extent3D is a struct cudaExtent: a size in elements for arrays, and in bytes (Width) and
// rows for pitched memory. An array's Height is 0 when it is 1D and its Depth 0 when 2D.
type Extent3D struct{ Width, Height, Depth uint64 }

// Pos3D is a struct cudaPos: a position in elements in an array, or in X units and rows in
// pitched memory. The X unit of pitched memory is the array's element when an array takes
// part in the copy (the runtime scales both sides' X by it), else the byte.
type Pos3D struct{ X, Y, Z uint64 }

// Place3D is one side of a 3D copy: a CUDA array when Array is not 0, else pitched device
// memory at Ptr with rows Pitch bytes apart and slices Rows rows apart (cudaPitchedPtr's
// ysize). Pos is where the copy starts in it.
type Place3D struct {
	Array Array
	Ptr   DevicePtr
	Pitch uint64
	Rows  uint64
	Pos   Pos3D
}

// Copy3DParams is a cudaMemcpy3DParms between device-side places (arrays and pitched device
// memory). Extent is in elements when either side is an array, else Width is in bytes.
type Copy3DParams struct {
	Src, Dst Place3D
	Extent   Extent3D
}

// ArrayInfo is what cudaArrayGetInfo says of an array.
type ArrayInfo struct {
	Format ChannelFormat
	Extent Extent3D
	Flags  uint32
}

// ArrayMemoryRequirements is a struct cudaArrayMemoryRequirements: what backing memory a
// deferred-mapping array needs.
type ArrayMemoryRequirements struct {
	Size, Alignment uint64
}

// ArraySparseProperties is a struct cudaArraySparseProperties: the tile shape of a sparse
// array and its mip tail.
type ArraySparseProperties struct {
	TileWidth, TileHeight, TileDepth uint32 // elements of one tile
	MiptailFirstLevel                uint32 // first level in the mip tail
	MiptailSize                      uint64 // bytes of the mip tail
	Flags                            uint32 // ArraySparseSingleMipTail or 0
}

// ArraySparseSingleMipTail is cudaArraySparsePropertiesSingleMipTail: one mip tail for all
// layers.
const ArraySparseSingleMipTail uint32 = 0x1

// ArrayDevice is CUDA arrays: their allocation, their description, and the copies that read
// and write them. Copies are ordered on a stream.
type ArrayDevice interface {
	// MallocArray allocates a 1D (height 0) or 2D array of width×height elements of format
	// (cudaMallocArray).
	MallocArray(format ChannelFormat, width, height uint64, flags uint32) (Array, error)
	// Malloc3DArray allocates a 1D, 2D, 3D, layered or cubemap array (cudaMalloc3DArray).
	Malloc3DArray(format ChannelFormat, extent Extent3D, flags uint32) (Array, error)
	// FreeArray frees an array (cudaFreeArray). A mipmap level is freed with its
	// mipmapped array only.
	FreeArray(a Array) error
	// ArrayInfo describes an array (cudaArrayGetInfo).
	ArrayInfo(a Array) (ArrayInfo, error)
	// ChannelDesc is an array's element format (cudaGetChannelDesc).
	ChannelDesc(a Array) (ChannelFormat, error)
	// ArrayPlane is plane i of a multi-planar array (cudaArrayGetPlane).
	ArrayPlane(a Array, plane uint32) (Array, error)
	// MallocMipmappedArray allocates levels mipmap levels, level 0 of extent
	// (cudaMallocMipmappedArray).
	MallocMipmappedArray(format ChannelFormat, extent Extent3D, levels, flags uint32) (MipmappedArray, error)
	// MipmappedArrayLevel is level i of m, an Array that lives as long as m
	// (cudaGetMipmappedArrayLevel).
	MipmappedArrayLevel(m MipmappedArray, level uint32) (Array, error)
	// FreeMipmappedArray frees m and its levels (cudaFreeMipmappedArray).
	FreeMipmappedArray(m MipmappedArray) error
	// ArrayMemoryRequirements is what a deferred-mapping array needs on this device
	// (cudaArrayGetMemoryRequirements).
	ArrayMemoryRequirements(a Array) (ArrayMemoryRequirements, error)
	// MipmappedArrayMemoryRequirements is ArrayMemoryRequirements of a mipmapped array
	// (cudaMipmappedArrayGetMemoryRequirements).
	MipmappedArrayMemoryRequirements(m MipmappedArray) (ArrayMemoryRequirements, error)
	// ArraySparseProperties is the tile layout of a sparse array
	// (cudaArrayGetSparseProperties).
	ArraySparseProperties(a Array) (ArraySparseProperties, error)
	// MipmappedArraySparseProperties is the tile layout of a sparse mipmapped array
	// (cudaMipmappedArrayGetSparseProperties).
	MipmappedArraySparseProperties(m MipmappedArray) (ArraySparseProperties, error)
	// Copy3D copies p.Extent between arrays and pitched device memory of this device,
	// ordered on s (cudaMemcpy3DAsync).
	//remote:posted
	Copy3D(p Copy3DParams, s Stream) error
	// Copy3DPeer is Copy3D with the source on device src and the destination on device dst,
	// ordered on s, a stream of this device (cudaMemcpy3DPeerAsync).
	//remote:posted
	Copy3DPeer(p Copy3DParams, src, dst int, s Stream) error
	// Copy2DToArray copies height rows of width bytes from device memory at src (rows spitch
	// apart) into a at byte column wOffset and row hOffset, ordered on s
	// (cudaMemcpy2DToArrayAsync).
	//remote:posted
	Copy2DToArray(a Array, wOffset, hOffset uint64, src DevicePtr, spitch, width, height uint64, s Stream) error
	// Copy2DFromArray copies height rows of width bytes from a at byte column wOffset and
	// row hOffset to device memory at dst (rows dpitch apart), ordered on s
	// (cudaMemcpy2DFromArrayAsync).
	//remote:posted
	Copy2DFromArray(dst DevicePtr, dpitch uint64, a Array, wOffset, hOffset, width, height uint64, s Stream) error
	// Memset3D sets extent (Width in bytes) of the pitched memory at p (rows pitch apart,
	// slices rows rows apart) to value, ordered on s (cudaMemset3DAsync).
	//remote:posted
	Memset3D(p DevicePtr, pitch, rows uint64, value byte, extent Extent3D, s Stream) error
}
