package textures

import "github.com/gpuactor/gpuactor/internal/backend"

// AddressMode is how a texture coordinate outside [0, size) (or [0, 1) normalized) is mapped
// (cudaTextureAddressMode).
type AddressMode int32

// Address modes. Wrap and Mirror need normalized coordinates: without them the runtime
// switches them to Clamp, as CUDA documents, and so does this package (the zero Desc, Wrap
// everywhere, clamps with unnormalized coordinates).
const (
	Wrap   AddressMode = AddressMode(backend.AddressWrap)   // repeat the texture
	Clamp  AddressMode = AddressMode(backend.AddressClamp)  // the edge texel
	Mirror AddressMode = AddressMode(backend.AddressMirror) // repeat, every other copy mirrored
	Border AddressMode = AddressMode(backend.AddressBorder) // the border colour
)

// FilterMode is how a fetch combines texels (cudaTextureFilterMode).
type FilterMode int32

// Filter modes. Linear filtering interpolates between the 2, 4 or 8 nearest texels with
// weights of 8 fractional bits; it applies to fetches that give floats (float formats, or
// 8- and 16-bit integers read as NormalizedFloat).
const (
	Point  FilterMode = FilterMode(backend.FilterPoint)
	Linear FilterMode = FilterMode(backend.FilterLinear)
)

// ReadMode is whether integer texels are read as they are or as normalized floats
// (cudaTextureReadMode).
type ReadMode int32

// Read modes. NormalizedFloat maps 8- and 16-bit unsigned integers to [0, 1] and signed ones
// to [-1, 1]; 32-bit integers are never promoted.
const (
	ElementType     ReadMode = ReadMode(backend.ReadElementType)
	NormalizedFloat ReadMode = ReadMode(backend.ReadNormalizedFloat)
)

// Desc is how a texture samples (cudaTextureDesc). The zero Desc samples point-wise with
// unnormalized coordinates, clamped at the edges, reading elements as they are.
type Desc struct {
	// Address is the address mode of x, y and z.
	Address [3]AddressMode
	Filter  FilterMode
	Read    ReadMode
	// Normalized takes coordinates in [0, 1) across the texture rather than in texels.
	Normalized bool
	// SRGB converts 8-bit RGB channels read as normalized floats from sRGB to linear.
	SRGB bool
	// Border is the colour (r, g, b, a) fetches outside the texture give in Border mode; an
	// integer texture reads the colour's bits as integers, as the runtime does.
	Border [4]float32
	// MaxAnisotropy is the anisotropic filtering ratio, clamped by the runtime to [1, 16].
	MaxAnisotropy uint32
	// MipmapFilter is how fetches between two mipmap levels combine them.
	MipmapFilter FilterMode
	// MipmapLevelBias is added to the mipmap level a fetch computes; the level is then
	// clamped to [MinMipmapLevelClamp, MaxMipmapLevelClamp], as given: leave
	// MaxMipmapLevelClamp 0 and every fetch reads level 0.
	MipmapLevelBias, MinMipmapLevelClamp, MaxMipmapLevelClamp float32
	// DisableTrilinearOptimization turns off the hardware's trilinear filtering shortcuts.
	DisableTrilinearOptimization bool
	// SeamlessCubemap filters across cubemap faces (a cubemap array resource only).
	SeamlessCubemap bool
}

func b32(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

func (d Desc) backend() backend.TextureDesc {
	return backend.TextureDesc{
		AddressX: int32(d.Address[0]), AddressY: int32(d.Address[1]), AddressZ: int32(d.Address[2]),
		Filter: int32(d.Filter), Read: int32(d.Read), SRGB: b32(d.SRGB),
		BorderR: d.Border[0], BorderG: d.Border[1], BorderB: d.Border[2], BorderA: d.Border[3],
		Normalized: b32(d.Normalized), MaxAnisotropy: d.MaxAnisotropy, MipmapFilter: int32(d.MipmapFilter),
		MipmapLevelBias: d.MipmapLevelBias, MinMipmapLevelClamp: d.MinMipmapLevelClamp,
		MaxMipmapLevelClamp: d.MaxMipmapLevelClamp, DisableTrilinear: b32(d.DisableTrilinearOptimization),
		SeamlessCubemap: b32(d.SeamlessCubemap),
	}
}

func descOf(t backend.TextureDesc) Desc {
	return Desc{
		Address: [3]AddressMode{AddressMode(t.AddressX), AddressMode(t.AddressY), AddressMode(t.AddressZ)},
		Filter:  FilterMode(t.Filter), Read: ReadMode(t.Read), SRGB: t.SRGB != 0,
		Border:     [4]float32{t.BorderR, t.BorderG, t.BorderB, t.BorderA},
		Normalized: t.Normalized != 0, MaxAnisotropy: t.MaxAnisotropy, MipmapFilter: FilterMode(t.MipmapFilter),
		MipmapLevelBias: t.MipmapLevelBias, MinMipmapLevelClamp: t.MinMipmapLevelClamp,
		MaxMipmapLevelClamp: t.MaxMipmapLevelClamp, DisableTrilinearOptimization: t.DisableTrilinear != 0,
		SeamlessCubemap: t.SeamlessCubemap != 0,
	}
}

// validate says which field of d is out of range, or nil.
func (d Desc) validate() error {
	for i, m := range d.Address {
		if m < Wrap || m > Border {
			return invalid("Desc.Address[%d] is %d: use Wrap, Clamp, Mirror or Border", i, m)
		}
	}
	if d.Filter != Point && d.Filter != Linear {
		return invalid("Desc.Filter is %d: use Point or Linear", d.Filter)
	}
	if d.MipmapFilter != Point && d.MipmapFilter != Linear {
		return invalid("Desc.MipmapFilter is %d: use Point or Linear", d.MipmapFilter)
	}
	if d.Read != ElementType && d.Read != NormalizedFloat {
		return invalid("Desc.Read is %d: use ElementType or NormalizedFloat", d.Read)
	}
	return nil
}

// ViewFormat is a resource view's format (cudaResourceViewFormat): the runtime's values;
// ViewNone keeps the resource's own.
type ViewFormat int32

// Resource view formats (values as in the runtime).
const (
	ViewNone ViewFormat = iota
	ViewUnsignedChar1
	ViewUnsignedChar2
	ViewUnsignedChar4
	ViewSignedChar1
	ViewSignedChar2
	ViewSignedChar4
	ViewUnsignedShort1
	ViewUnsignedShort2
	ViewUnsignedShort4
	ViewSignedShort1
	ViewSignedShort2
	ViewSignedShort4
	ViewUnsignedInt1
	ViewUnsignedInt2
	ViewUnsignedInt4
	ViewSignedInt1
	ViewSignedInt2
	ViewSignedInt4
	ViewHalf1
	ViewHalf2
	ViewHalf4
	ViewFloat1
	ViewFloat2
	ViewFloat4
	ViewUnsignedBlockCompressed1
	ViewUnsignedBlockCompressed2
	ViewUnsignedBlockCompressed3
	ViewUnsignedBlockCompressed4
	ViewSignedBlockCompressed4
	ViewUnsignedBlockCompressed5
	ViewSignedBlockCompressed5
	ViewUnsignedBlockCompressed6H
	ViewSignedBlockCompressed6H
	ViewUnsignedBlockCompressed7
)

// View reinterprets an array resource (cudaResourceViewDesc): another format, and the
// extents, mipmap levels and layers a texture sees. Only array and mipmapped array
// resources take a view. A format other than the array's, of the same element size, is
// accepted, but what it reads is the GPU's business: arrays have an opaque layout, and an
// H200 reading uint32 texels as uchar4 gave none of the texels' bytes (the simulator
// reinterprets the bytes). The block-compressed formats over uint32 arrays are the ones CUDA
// defines.
type View struct {
	Format                            ViewFormat
	Width, Height, Depth              uint64
	FirstMipmapLevel, LastMipmapLevel uint32
	FirstLayer, LastLayer             uint32
}

func (v View) backend() backend.ResourceViewDesc {
	return backend.ResourceViewDesc{Format: int32(v.Format), Width: v.Width, Height: v.Height, Depth: v.Depth,
		FirstMipmapLevel: v.FirstMipmapLevel, LastMipmapLevel: v.LastMipmapLevel, FirstLayer: v.FirstLayer, LastLayer: v.LastLayer}
}

func viewOf(b backend.ResourceViewDesc) View {
	return View{Format: ViewFormat(b.Format), Width: b.Width, Height: b.Height, Depth: b.Depth,
		FirstMipmapLevel: b.FirstMipmapLevel, LastMipmapLevel: b.LastMipmapLevel, FirstLayer: b.FirstLayer, LastLayer: b.LastLayer}
}
