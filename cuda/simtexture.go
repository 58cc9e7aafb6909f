package cuda

import (
	"fmt"
	"unsafe"
)

// TexFetch is which texture function of device code a simulated fetch stands for.
type TexFetch uint8

// The texture fetch functions the simulator models.
const (
	Fetch1D           TexFetch = iota + 1 // tex1Dfetch: an integer index into linear memory
	Tex1D                                 // tex1D
	Tex2D                                 // tex2D
	Tex3D                                 // tex3D
	Tex1DLayered                          // tex1DLayered
	Tex2DLayered                          // tex2DLayered
	TexCubemap                            // texCubemap
	TexCubemapLayered                     // texCubemapLayered
)

// TexQuery is one texture fetch: the function, its coordinates (in texels, or in [0, 1) for a
// texture with normalized coordinates; X alone for tex1Dfetch, as Index), the layer of a layered
// fetch and the mipmap level of a fetch that names one (tex2DLod...).
type TexQuery struct {
	Fetch   TexFetch
	X, Y, Z float32
	Index   int32
	Layer   int32
	Level   float32
}

// BoundaryMode is what a surface access outside the surface does (cudaSurfaceBoundaryMode).
type BoundaryMode int32

// Surface boundary modes (values as in the runtime).
const (
	BoundaryZero  BoundaryMode = 0 // reads give zero, writes are dropped
	BoundaryClamp BoundaryMode = 1 // the coordinates are clamped to the surface
	BoundaryTrap  BoundaryMode = 2 // the access faults the kernel (the default in device code)
)

// SimTextures samples the texture objects and reaches the surface objects of a simulated
// kernel's device, as the GPU's texture units do.
type SimTextures interface {
	// Sample is the four channels (x, y, z, w) of texture t at q, after addressing, filtering
	// and read-mode conversion: integers exactly, normalized or float channels as floats. An
	// unused channel is 0. An error names why t cannot be sampled so (a destroyed object, a
	// fetch the resource does not support, freed memory).
	Sample(t TextureObject, q TexQuery) ([4]float64, error)
	// SurfaceElement is the n bytes of surface s at byte offset x of row y of slice z (the
	// layer of a layered surface), sharing the array's storage so that writes land in it; nil
	// when the access is outside the surface and mode is BoundaryZero. Outside the surface
	// with BoundaryTrap, or with x not a multiple of the element size, or n not the element's
	// size, it is an error.
	SurfaceElement(s SurfaceObject, x, y, z int32, n int, mode BoundaryMode) ([]byte, error)
}

// SimTexel is what a simulated texture fetch returns: one channel, or a vector of 2 or 4 (as
// float2, float4, uchar4... in device code).
type SimTexel interface {
	float32 | int32 | uint32 | int16 | uint16 | int8 | uint8 |
		[2]float32 | [4]float32 | [2]int32 | [4]int32 | [2]uint32 | [4]uint32 |
		[4]int16 | [4]uint16 | [4]int8 | [4]uint8
}

func texSample[T SimTexel](c *KernelCall, t TextureObject, q TexQuery) T {
	if c.Textures == nil {
		panic(fmt.Sprintf("sim kernel: texture %#x: the launch has no textures", uint64(t)))
	}
	v, err := c.Textures.Sample(t, q)
	if err != nil {
		panic(fmt.Sprintf("sim kernel: %v", err))
	}
	return texelOf[T](v)
}

// texelOf converts four channels to the fetch's result type, as device code's conversion does.
func texelOf[T SimTexel](v [4]float64) T {
	var out T
	switch p := any(&out).(type) {
	case *float32:
		*p = float32(v[0])
	case *int32:
		*p = int32(v[0])
	case *uint32:
		*p = uint32(v[0])
	case *int16:
		*p = int16(v[0])
	case *uint16:
		*p = uint16(v[0])
	case *int8:
		*p = int8(v[0])
	case *uint8:
		*p = uint8(v[0])
	case *[2]float32:
		*p = [2]float32{float32(v[0]), float32(v[1])}
	case *[4]float32:
		*p = [4]float32{float32(v[0]), float32(v[1]), float32(v[2]), float32(v[3])}
	case *[2]int32:
		*p = [2]int32{int32(v[0]), int32(v[1])}
	case *[4]int32:
		*p = [4]int32{int32(v[0]), int32(v[1]), int32(v[2]), int32(v[3])}
	case *[2]uint32:
		*p = [2]uint32{uint32(v[0]), uint32(v[1])}
	case *[4]uint32:
		*p = [4]uint32{uint32(v[0]), uint32(v[1]), uint32(v[2]), uint32(v[3])}
	case *[4]int16:
		*p = [4]int16{int16(v[0]), int16(v[1]), int16(v[2]), int16(v[3])}
	case *[4]uint16:
		*p = [4]uint16{uint16(v[0]), uint16(v[1]), uint16(v[2]), uint16(v[3])}
	case *[4]int8:
		*p = [4]int8{int8(v[0]), int8(v[1]), int8(v[2]), int8(v[3])}
	case *[4]uint8:
		*p = [4]uint8{uint8(v[0]), uint8(v[1]), uint8(v[2]), uint8(v[3])}
	}
	return out
}

// SimTex1Dfetch is tex1Dfetch<T>(t, i) of device code: element i of a texture over linear
// memory, with no filtering; an index outside it reads zero. A fetch the simulator cannot make
// (a destroyed object, another kind of resource) panics: a fault of the kernel.
func SimTex1Dfetch[T SimTexel](c *KernelCall, t TextureObject, i int32) T {
	return texSample[T](c, t, TexQuery{Fetch: Fetch1D, Index: i})
}

// SimTex1D is tex1D<T>(t, x) of device code.
func SimTex1D[T SimTexel](c *KernelCall, t TextureObject, x float32) T {
	return texSample[T](c, t, TexQuery{Fetch: Tex1D, X: x})
}

// SimTex2D is tex2D<T>(t, x, y) of device code: texture t sampled at (x, y) with its address
// modes, filter, read mode and coordinate normalization.
func SimTex2D[T SimTexel](c *KernelCall, t TextureObject, x, y float32) T {
	return texSample[T](c, t, TexQuery{Fetch: Tex2D, X: x, Y: y})
}

// SimTex3D is tex3D<T>(t, x, y, z) of device code.
func SimTex3D[T SimTexel](c *KernelCall, t TextureObject, x, y, z float32) T {
	return texSample[T](c, t, TexQuery{Fetch: Tex3D, X: x, Y: y, Z: z})
}

// SimTex1DLayered is tex1DLayered<T>(t, x, layer) of device code.
func SimTex1DLayered[T SimTexel](c *KernelCall, t TextureObject, x float32, layer int32) T {
	return texSample[T](c, t, TexQuery{Fetch: Tex1DLayered, X: x, Layer: layer})
}

// SimTex2DLayered is tex2DLayered<T>(t, x, y, layer) of device code.
func SimTex2DLayered[T SimTexel](c *KernelCall, t TextureObject, x, y float32, layer int32) T {
	return texSample[T](c, t, TexQuery{Fetch: Tex2DLayered, X: x, Y: y, Layer: layer})
}

// SimTexCubemap is texCubemap<T>(t, x, y, z) of device code: the face the direction (x, y, z)
// points at, sampled where it crosses it.
func SimTexCubemap[T SimTexel](c *KernelCall, t TextureObject, x, y, z float32) T {
	return texSample[T](c, t, TexQuery{Fetch: TexCubemap, X: x, Y: y, Z: z})
}

// SimTexCubemapLayered is texCubemapLayered<T>(t, x, y, z, layer) of device code.
func SimTexCubemapLayered[T SimTexel](c *KernelCall, t TextureObject, x, y, z float32, layer int32) T {
	return texSample[T](c, t, TexQuery{Fetch: TexCubemapLayered, X: x, Y: y, Z: z, Layer: layer})
}

// SimTex2DLod is tex2DLod<T>(t, x, y, level) of device code: a mipmapped texture sampled at
// mipmap level level.
func SimTex2DLod[T SimTexel](c *KernelCall, t TextureObject, x, y, level float32) T {
	return texSample[T](c, t, TexQuery{Fetch: Tex2D, X: x, Y: y, Level: level})
}

func surfElem[T any](c *KernelCall, s SurfaceObject, x, y, z int32, mode BoundaryMode) []byte {
	var zero T
	if c.Textures == nil {
		panic(fmt.Sprintf("sim kernel: surface %#x: the launch has no surfaces", uint64(s)))
	}
	b, err := c.Textures.SurfaceElement(s, x, y, z, int(unsafe.Sizeof(zero)), mode)
	if err != nil {
		panic(fmt.Sprintf("sim kernel: %v", err))
	}
	return b
}

func surfRead[T any](b []byte) T {
	var v T
	if b != nil {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&v)), unsafe.Sizeof(v)), b)
	}
	return v
}

func surfWrite[T any](b []byte, v T) {
	if b != nil {
		copy(b, unsafe.Slice((*byte)(unsafe.Pointer(&v)), unsafe.Sizeof(v)))
	}
}

// SimSurf1DRead is surf1Dread<T>(s, x, mode) of device code: x is in bytes, as on the GPU. An
// access outside the surface with BoundaryTrap (device code's default) panics: a kernel fault.
func SimSurf1DRead[T any](c *KernelCall, s SurfaceObject, x int32, mode BoundaryMode) T {
	return surfRead[T](surfElem[T](c, s, x, 0, 0, mode))
}

// SimSurf1DWrite is surf1Dwrite(v, s, x, mode) of device code; x is in bytes.
func SimSurf1DWrite[T any](c *KernelCall, s SurfaceObject, v T, x int32, mode BoundaryMode) {
	surfWrite(surfElem[T](c, s, x, 0, 0, mode), v)
}

// SimSurf2DRead is surf2Dread<T>(s, x, y, mode) of device code; x is in bytes.
func SimSurf2DRead[T any](c *KernelCall, s SurfaceObject, x, y int32, mode BoundaryMode) T {
	return surfRead[T](surfElem[T](c, s, x, y, 0, mode))
}

// SimSurf2DWrite is surf2Dwrite(v, s, x, y, mode) of device code; x is in bytes. The write
// lands in the surface's array.
func SimSurf2DWrite[T any](c *KernelCall, s SurfaceObject, v T, x, y int32, mode BoundaryMode) {
	surfWrite(surfElem[T](c, s, x, y, 0, mode), v)
}

// SimSurf3DRead is surf3Dread<T>(s, x, y, z, mode) of device code; x is in bytes.
func SimSurf3DRead[T any](c *KernelCall, s SurfaceObject, x, y, z int32, mode BoundaryMode) T {
	return surfRead[T](surfElem[T](c, s, x, y, z, mode))
}

// SimSurf3DWrite is surf3Dwrite(v, s, x, y, z, mode) of device code; x is in bytes.
func SimSurf3DWrite[T any](c *KernelCall, s SurfaceObject, v T, x, y, z int32, mode BoundaryMode) {
	surfWrite(surfElem[T](c, s, x, y, z, mode), v)
}

// SimSurf2DLayeredRead is surf2DLayeredread<T>(s, x, y, layer, mode) of device code.
func SimSurf2DLayeredRead[T any](c *KernelCall, s SurfaceObject, x, y, layer int32, mode BoundaryMode) T {
	return surfRead[T](surfElem[T](c, s, x, y, layer, mode))
}

// SimSurf2DLayeredWrite is surf2DLayeredwrite(v, s, x, y, layer, mode) of device code.
func SimSurf2DLayeredWrite[T any](c *KernelCall, s SurfaceObject, v T, x, y, layer int32, mode BoundaryMode) {
	surfWrite(surfElem[T](c, s, x, y, layer, mode), v)
}
