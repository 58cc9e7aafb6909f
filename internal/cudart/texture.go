package cudart

import (
	"unsafe"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// resourceDesc is a struct cudaResourceDesc as the CUDA 11.x to 13.0 headers lay it out (144
// bytes on 64-bit hosts): the resource type, a 128-byte union (the largest member is
// reserved[32] ints) 8-aligned for its pointers, and the flags.
type resourceDesc struct {
	resType int32
	_       int32
	res     [16]uint64
	flags   uint32
	_       uint32
}

// resPitch2D is the pitch2D member of cudaResourceDesc's union; the linear member is its first
// four fields (sizeInBytes where width is), and the array and mipmap members its first word.
type resPitch2D struct {
	devPtr uintptr
	desc   cuda.ChannelFormat // struct cudaChannelFormatDesc: x, y, z, w, f (20 bytes)
	_      int32
	width  uint64
	height uint64
	pitch  uint64
}

// textureDesc is a struct cudaTextureDesc of CUDA 12.0 to 13.0 (72 bytes), which 11.x calls
// cudaTextureDesc_v2.
type textureDesc struct {
	addressMode                  [3]int32
	filterMode                   int32
	readMode                     int32
	sRGB                         int32
	borderColor                  [4]float32
	normalizedCoords             int32
	maxAnisotropy                uint32
	mipmapFilterMode             int32
	mipmapLevelBias              float32
	minMipmapLevelClamp          float32
	maxMipmapLevelClamp          float32
	disableTrilinearOptimization int32
	seamlessCubemap              int32
}

// resourceViewDesc is a struct cudaResourceViewDesc (112 bytes).
type resourceViewDesc struct {
	format           int32
	_                int32
	width            uint64
	height           uint64
	depth            uint64
	firstMipmapLevel uint32
	lastMipmapLevel  uint32
	firstLayer       uint32
	lastLayer        uint32
	reserved         [16]uint32
}

func (c *resourceDesc) pitch2D() *resPitch2D { return (*resPitch2D)(unsafe.Pointer(&c.res[0])) }

func packResourceDesc(r backend.ResourceDesc) resourceDesc {
	c := resourceDesc{resType: int32(r.Type), flags: r.Flags}
	switch r.Type {
	case backend.ResourceArray:
		c.res[0] = uint64(r.Array)
	case backend.ResourceMipmapped:
		c.res[0] = uint64(r.Mipmapped)
	case backend.ResourceLinear:
		p := c.pitch2D()
		p.devPtr, p.desc, p.width = uintptr(r.Ptr), r.Format, r.Size
	case backend.ResourcePitch2D:
		p := c.pitch2D()
		p.devPtr, p.desc, p.width, p.height, p.pitch = uintptr(r.Ptr), r.Format, r.Width, r.Height, r.Pitch
	}
	return c
}

func unpackResourceDesc(c *resourceDesc) backend.ResourceDesc {
	r := backend.ResourceDesc{Type: backend.ResourceType(c.resType), Flags: c.flags}
	p := c.pitch2D()
	switch r.Type {
	case backend.ResourceArray:
		r.Array = backend.Array(c.res[0])
	case backend.ResourceMipmapped:
		r.Mipmapped = backend.MipmappedArray(c.res[0])
	case backend.ResourceLinear:
		r.Ptr, r.Format, r.Size = DevicePtr(p.devPtr), p.desc, p.width
	case backend.ResourcePitch2D:
		r.Ptr, r.Format, r.Width, r.Height, r.Pitch = DevicePtr(p.devPtr), p.desc, p.width, p.height, p.pitch
	}
	return r
}

func packTextureDesc(t backend.TextureDesc) textureDesc {
	return textureDesc{
		addressMode:                  [3]int32{t.AddressX, t.AddressY, t.AddressZ},
		filterMode:                   t.Filter,
		readMode:                     t.Read,
		sRGB:                         t.SRGB,
		borderColor:                  [4]float32{t.BorderR, t.BorderG, t.BorderB, t.BorderA},
		normalizedCoords:             t.Normalized,
		maxAnisotropy:                t.MaxAnisotropy,
		mipmapFilterMode:             t.MipmapFilter,
		mipmapLevelBias:              t.MipmapLevelBias,
		minMipmapLevelClamp:          t.MinMipmapLevelClamp,
		maxMipmapLevelClamp:          t.MaxMipmapLevelClamp,
		disableTrilinearOptimization: t.DisableTrilinear,
		seamlessCubemap:              t.SeamlessCubemap,
	}
}

func unpackTextureDesc(c *textureDesc) backend.TextureDesc {
	return backend.TextureDesc{
		AddressX: c.addressMode[0], AddressY: c.addressMode[1], AddressZ: c.addressMode[2],
		Filter: c.filterMode, Read: c.readMode, SRGB: c.sRGB,
		BorderR: c.borderColor[0], BorderG: c.borderColor[1], BorderB: c.borderColor[2], BorderA: c.borderColor[3],
		Normalized: c.normalizedCoords, MaxAnisotropy: c.maxAnisotropy, MipmapFilter: c.mipmapFilterMode,
		MipmapLevelBias: c.mipmapLevelBias, MinMipmapLevelClamp: c.minMipmapLevelClamp,
		MaxMipmapLevelClamp: c.maxMipmapLevelClamp, DisableTrilinear: c.disableTrilinearOptimization,
		SeamlessCubemap: c.seamlessCubemap,
	}
}

func packViewDesc(v backend.ResourceViewDesc) resourceViewDesc {
	return resourceViewDesc{format: v.Format, width: v.Width, height: v.Height, depth: v.Depth,
		firstMipmapLevel: v.FirstMipmapLevel, lastMipmapLevel: v.LastMipmapLevel,
		firstLayer: v.FirstLayer, lastLayer: v.LastLayer}
}

func unpackViewDesc(c *resourceViewDesc) backend.ResourceViewDesc {
	return backend.ResourceViewDesc{Format: c.format, Width: c.width, Height: c.height, Depth: c.depth,
		FirstMipmapLevel: c.firstMipmapLevel, LastMipmapLevel: c.lastMipmapLevel,
		FirstLayer: c.firstLayer, LastLayer: c.lastLayer}
}

// textureSym picks the symbol taking the 72-byte cudaTextureDesc: 11.x exports it as _v2.
func (r *Runtime) textureSym(plain, v2 int) int {
	if r.major == 11 {
		return v2
	}
	return plain
}

// CreateTextureObject is cudaCreateTextureObject(cudaTextureObject_t*, const cudaResourceDesc*,
// const cudaTextureDesc*, const cudaResourceViewDesc*); a zero view is passed as NULL.
func (r *Runtime) CreateTextureObject(res backend.ResourceDesc, tex backend.TextureDesc, view backend.ResourceViewDesc) (cuda.TextureObject, error) {
	cr, ct := packResourceDesc(res), packTextureDesc(tex)
	var cv *resourceViewDesc
	if view != (backend.ResourceViewDesc{}) {
		v := packViewDesc(view)
		cv = &v
	}
	var obj uint64
	err := r.call(r.textureSym(fnCreateTextureObject, fnCreateTextureObjectV2), uintptr(unsafe.Pointer(&obj)),
		uintptr(unsafe.Pointer(&cr)), uintptr(unsafe.Pointer(&ct)), uintptr(unsafe.Pointer(cv)))
	return cuda.TextureObject(obj), err
}

// DestroyTextureObject is cudaDestroyTextureObject(cudaTextureObject_t).
func (r *Runtime) DestroyTextureObject(t cuda.TextureObject) error {
	return r.call(fnDestroyTextureObject, uintptr(t))
}

// TextureObjectResourceDesc is cudaGetTextureObjectResourceDesc(cudaResourceDesc*, obj).
func (r *Runtime) TextureObjectResourceDesc(t cuda.TextureObject) (backend.ResourceDesc, error) {
	var c resourceDesc
	if err := r.call(fnGetTextureObjectResourceDesc, uintptr(unsafe.Pointer(&c)), uintptr(t)); err != nil {
		return backend.ResourceDesc{}, err
	}
	return unpackResourceDesc(&c), nil
}

// TextureObjectTextureDesc is cudaGetTextureObjectTextureDesc(cudaTextureDesc*, obj), less the
// border colour: CUDA 13.0 leaves borderColor as it found it (zeros, or stack garbage in the
// caller's struct), so it is reported as zero and the caller keeps the one it set.
func (r *Runtime) TextureObjectTextureDesc(t cuda.TextureObject) (backend.TextureDesc, error) {
	var c textureDesc
	fn := r.textureSym(fnGetTextureObjectTextureDesc, fnGetTextureObjectTextureDescV2)
	if err := r.call(fn, uintptr(unsafe.Pointer(&c)), uintptr(t)); err != nil {
		return backend.TextureDesc{}, err
	}
	c.borderColor = [4]float32{}
	return unpackTextureDesc(&c), nil
}

// TextureObjectViewDesc is cudaGetTextureObjectResourceViewDesc(cudaResourceViewDesc*, obj),
// defined only for a texture made with a view (13.0 gives stale bytes for one without).
func (r *Runtime) TextureObjectViewDesc(t cuda.TextureObject) (backend.ResourceViewDesc, error) {
	var c resourceViewDesc
	if err := r.call(fnGetTextureObjectResourceViewDesc, uintptr(unsafe.Pointer(&c)), uintptr(t)); err != nil {
		return backend.ResourceViewDesc{}, err
	}
	return unpackViewDesc(&c), nil
}

// CreateSurfaceObject is cudaCreateSurfaceObject(cudaSurfaceObject_t*, const cudaResourceDesc*).
func (r *Runtime) CreateSurfaceObject(res backend.ResourceDesc) (cuda.SurfaceObject, error) {
	c := packResourceDesc(res)
	var obj uint64
	err := r.call(fnCreateSurfaceObject, uintptr(unsafe.Pointer(&obj)), uintptr(unsafe.Pointer(&c)))
	return cuda.SurfaceObject(obj), err
}

// DestroySurfaceObject is cudaDestroySurfaceObject(cudaSurfaceObject_t).
func (r *Runtime) DestroySurfaceObject(s cuda.SurfaceObject) error {
	return r.call(fnDestroySurfaceObject, uintptr(s))
}

// SurfaceObjectResourceDesc is cudaGetSurfaceObjectResourceDesc(cudaResourceDesc*, obj).
func (r *Runtime) SurfaceObjectResourceDesc(s cuda.SurfaceObject) (backend.ResourceDesc, error) {
	var c resourceDesc
	if err := r.call(fnGetSurfaceObjectResourceDesc, uintptr(unsafe.Pointer(&c)), uintptr(s)); err != nil {
		return backend.ResourceDesc{}, err
	}
	return unpackResourceDesc(&c), nil
}

// Texture1DLinearMaxWidth is cudaDeviceGetTexture1DLinearMaxWidth(size_t*, const
// cudaChannelFormatDesc*, int device).
func (r *Runtime) Texture1DLinearMaxWidth(f cuda.ChannelFormat, ordinal int) (uint64, error) {
	var n uint64
	err := r.call(fnDeviceGetTexture1DLinearMaxWidth, uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&f)), uintptr(ordinal))
	return n, err
}

func (d *device) CreateTextureObject(res backend.ResourceDesc, tex backend.TextureDesc, view backend.ResourceViewDesc) (cuda.TextureObject, error) {
	return d.rt.CreateTextureObject(res, tex, view)
}

func (d *device) DestroyTextureObject(t cuda.TextureObject) error {
	return d.rt.DestroyTextureObject(t)
}

func (d *device) TextureObjectResourceDesc(t cuda.TextureObject) (backend.ResourceDesc, error) {
	return d.rt.TextureObjectResourceDesc(t)
}

func (d *device) TextureObjectTextureDesc(t cuda.TextureObject) (backend.TextureDesc, error) {
	return d.rt.TextureObjectTextureDesc(t)
}

func (d *device) TextureObjectViewDesc(t cuda.TextureObject) (backend.ResourceViewDesc, error) {
	return d.rt.TextureObjectViewDesc(t)
}

func (d *device) CreateSurfaceObject(res backend.ResourceDesc) (cuda.SurfaceObject, error) {
	return d.rt.CreateSurfaceObject(res)
}

func (d *device) DestroySurfaceObject(s cuda.SurfaceObject) error {
	return d.rt.DestroySurfaceObject(s)
}

func (d *device) SurfaceObjectResourceDesc(s cuda.SurfaceObject) (backend.ResourceDesc, error) {
	return d.rt.SurfaceObjectResourceDesc(s)
}

func (d *device) Texture1DLinearMaxWidth(f cuda.ChannelFormat) (uint64, error) {
	return d.rt.Texture1DLinearMaxWidth(f, d.ordinal)
}
