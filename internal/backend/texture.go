package backend

import "github.com/gpuactor/gpuactor/cuda"

// ResourceType is what a texture or surface reads (cudaResourceType).
type ResourceType int32

// Resource types (values as in the runtime).
const (
	ResourceArray     ResourceType = 0 // a CUDA array
	ResourceMipmapped ResourceType = 1 // a mipmapped array
	ResourceLinear    ResourceType = 2 // linear device memory, read with tex1Dfetch
	ResourcePitch2D   ResourceType = 3 // pitched 2D device memory
)

// ResourceDesc is a cudaResourceDesc, flattened: Type says which fields count. An array
// resource uses Array; a mipmapped one Mipmapped; a linear one Ptr, Format and Size (bytes); a
// pitch2D one Ptr, Format, Width and Height (elements) and Pitch (bytes). The cudart binding
// lays it out as the runtime's union.
type ResourceDesc struct {
	Type      ResourceType
	Array     Array
	Mipmapped MipmappedArray
	Ptr       DevicePtr
	Format    cuda.ChannelFormat
	Size      uint64
	Width     uint64
	Height    uint64
	Pitch     uint64
	Flags     uint32 // must be zero
}

// TextureDesc is a cudaTextureDesc with its arrays spelled out field by field (so that it
// crosses to an isolated device as a plain struct). Address modes, filter modes and read modes
// hold the runtime's enum values; booleans are 0 or 1, as the runtime takes them.
type TextureDesc struct {
	AddressX, AddressY, AddressZ int32 // cudaTextureAddressMode per dimension
	Filter                       int32 // cudaTextureFilterMode
	Read                         int32 // cudaTextureReadMode
	SRGB                         int32
	BorderR, BorderG, BorderB    float32
	BorderA                      float32
	Normalized                   int32
	MaxAnisotropy                uint32
	MipmapFilter                 int32
	MipmapLevelBias              float32
	MinMipmapLevelClamp          float32
	MaxMipmapLevelClamp          float32
	DisableTrilinear             int32
	SeamlessCubemap              int32
}

// ResourceViewDesc is a cudaResourceViewDesc: how a texture reinterprets its resource. The
// zero value means no view (the runtime is given NULL).
type ResourceViewDesc struct {
	Format           int32 // cudaResourceViewFormat
	Width            uint64
	Height           uint64
	Depth            uint64
	FirstMipmapLevel uint32
	LastMipmapLevel  uint32
	FirstLayer       uint32
	LastLayer        uint32
}

// Texture address, filter and read modes (cudaTextureAddressMode, cudaTextureFilterMode,
// cudaTextureReadMode).
const (
	AddressWrap   int32 = 0
	AddressClamp  int32 = 1
	AddressMirror int32 = 2
	AddressBorder int32 = 3

	FilterPoint  int32 = 0
	FilterLinear int32 = 1

	ReadElementType     int32 = 0
	ReadNormalizedFloat int32 = 1
)

// Device attributes of textures over linear memory that the texture calls check against.
const (
	AttrTexturePitchAlignment    Attr = 51 // bytes: the pitch of a pitch2D resource
	AttrMaxTexture1DLinearWidth  Attr = 69 // elements; cudaDeviceGetTexture1DLinearMaxWidth is per format
	AttrMaxTexture2DLinearWidth  Attr = 70 // elements
	AttrMaxTexture2DLinearHeight Attr = 71 // rows
	AttrMaxTexture2DLinearPitch  Attr = 72 // bytes
)

// TextureObjects is the texture and surface object part of the runtime API (Texture Object
// Management, Surface Object Management).
type TextureObjects interface {
	// CreateTextureObject creates a texture object over res, sampled as tex says, through
	// view (the zero view: none) (cudaCreateTextureObject).
	CreateTextureObject(res ResourceDesc, tex TextureDesc, view ResourceViewDesc) (cuda.TextureObject, error)
	// DestroyTextureObject destroys a texture object (cudaDestroyTextureObject).
	DestroyTextureObject(t cuda.TextureObject) error
	// TextureObjectResourceDesc is the resource a texture object reads
	// (cudaGetTextureObjectResourceDesc).
	TextureObjectResourceDesc(t cuda.TextureObject) (ResourceDesc, error)
	// TextureObjectTextureDesc is how a texture object samples
	// (cudaGetTextureObjectTextureDesc). Its border colour is zero: CUDA 13.0 does not report
	// the one the texture was made with (it leaves those bytes stale), so the caller keeps it.
	TextureObjectTextureDesc(t cuda.TextureObject) (TextureDesc, error)
	// TextureObjectViewDesc is a texture object's resource view
	// (cudaGetTextureObjectResourceViewDesc). It is defined only for a texture made with a
	// view: CUDA documents cudaErrorInvalidValue without one, 13.0 returns success and stale
	// bytes, so the caller does not ask then.
	TextureObjectViewDesc(t cuda.TextureObject) (ResourceViewDesc, error)
	// CreateSurfaceObject creates a surface object over an array resource
	// (cudaCreateSurfaceObject).
	CreateSurfaceObject(res ResourceDesc) (cuda.SurfaceObject, error)
	// DestroySurfaceObject destroys a surface object (cudaDestroySurfaceObject).
	DestroySurfaceObject(s cuda.SurfaceObject) error
	// SurfaceObjectResourceDesc is the resource a surface object reads and writes
	// (cudaGetSurfaceObjectResourceDesc).
	SurfaceObjectResourceDesc(s cuda.SurfaceObject) (ResourceDesc, error)
	// Texture1DLinearMaxWidth is the most elements of format f a texture over linear memory
	// may span on this device (cudaDeviceGetTexture1DLinearMaxWidth).
	Texture1DLinearMaxWidth(f cuda.ChannelFormat) (uint64, error)
}
