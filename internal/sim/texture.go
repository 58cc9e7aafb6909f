package sim

import (
	"fmt"
	"sync"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// simTexture is a texture object: what cudaCreateTextureObject was given, and the array or
// mipmapped array it reads, found when it was made.
type simTexture struct {
	res  backend.ResourceDesc
	tex  backend.TextureDesc
	view backend.ResourceViewDesc
	arr  *simArray
	mip  *simMipmapped
}

// simSurface is a surface object over an array.
type simSurface struct {
	res backend.ResourceDesc
	arr *simArray
}

// texState holds a device's texture and surface objects by handle. Handles carry the
// device's ordinal in their high bits, so that they are unique across the backend.
type texState struct {
	mu    sync.Mutex
	next  uint64
	texs  map[cuda.TextureObject]*simTexture
	surfs map[cuda.SurfaceObject]*simSurface
}

func (d *device) newObjectHandle() uint64 {
	d.tex.next++
	return uint64(d.ordinal+1)<<40 | d.tex.next
}

func (d *device) lookupTexture(t cuda.TextureObject) *simTexture {
	d.tex.mu.Lock()
	defer d.tex.mu.Unlock()
	return d.tex.texs[t]
}

func (d *device) lookupSurface(s cuda.SurfaceObject) *simSurface {
	d.tex.mu.Lock()
	defer d.tex.mu.Unlock()
	return d.tex.surfs[s]
}

// checkResource says why res cannot back a texture (or, with surface, a surface) on d, as the
// runtime's checks do, and returns the array it names.
func (d *device) checkResource(res backend.ResourceDesc, surface bool) (*simArray, *simMipmapped, cudaerr.Code, string) {
	if res.Flags != 0 {
		return nil, nil, cudaerr.InvalidValue, fmt.Sprintf("resource flags %#x: must be zero", res.Flags)
	}
	if surface && res.Type != backend.ResourceArray {
		return nil, nil, cudaerr.InvalidValue, fmt.Sprintf("a surface needs an array resource, not resource type %d", res.Type)
	}
	switch res.Type {
	case backend.ResourceArray:
		a := d.lookupArray(res.Array)
		if a == nil {
			return nil, nil, cudaerr.InvalidResourceHandle, fmt.Sprintf("array %#x is not a live array of device %d", uintptr(res.Array), d.ordinal)
		}
		if surface && a.flags&backend.ArraySurfaceLoadStore == 0 {
			return nil, nil, cudaerr.InvalidValue, fmt.Sprintf("array %#x was made without the surface load/store flag (cudaArraySurfaceLoadStore)", uintptr(res.Array))
		}
		return a, nil, 0, ""
	case backend.ResourceMipmapped:
		m := d.lookupMipmapped(res.Mipmapped)
		if m == nil {
			return nil, nil, cudaerr.InvalidResourceHandle, fmt.Sprintf("mipmapped array %#x is not a live mipmapped array of device %d", uintptr(res.Mipmapped), d.ordinal)
		}
		return nil, m, 0, ""
	case backend.ResourceLinear, backend.ResourcePitch2D:
	default:
		return nil, nil, cudaerr.InvalidValue, fmt.Sprintf("resource type %d is not one of array (0), mipmapped array (1), linear (2), pitch2D (3)", res.Type)
	}
	if err := res.Format.Validate(); err != nil {
		return nil, nil, cudaerr.InvalidChannelDescriptor, err.Error()
	}
	if align := uint64(d.attrs[backend.AttrTextureAlignment]); res.Ptr == 0 || uint64(res.Ptr)%align != 0 {
		return nil, nil, cudaerr.InvalidValue, fmt.Sprintf("device pointer %#x is not aligned to the texture alignment (%d bytes)", uint64(res.Ptr), align)
	}
	es := res.Format.Size()
	var span uint64
	if res.Type == backend.ResourceLinear {
		if max := d.linearMaxWidth(); res.Size/es > max {
			return nil, nil, cudaerr.InvalidValue, fmt.Sprintf("%d bytes are %d elements of %s, more than the device's %d for a linear texture", res.Size, res.Size/es, res.Format, max)
		}
		if res.Size == 0 {
			return nil, nil, cudaerr.InvalidValue, "a linear resource of 0 bytes"
		}
		span = res.Size
	} else {
		a := d.attrs
		switch {
		case res.Width == 0 || res.Height == 0:
			return nil, nil, cudaerr.InvalidValue, fmt.Sprintf("pitch2D resource of %dx%d elements: both must be positive", res.Width, res.Height)
		case res.Width > uint64(a[backend.AttrMaxTexture2DLinearWidth]) || res.Height > uint64(a[backend.AttrMaxTexture2DLinearHeight]):
			return nil, nil, cudaerr.InvalidValue, fmt.Sprintf("pitch2D resource of %dx%d elements exceeds the device's %dx%d", res.Width, res.Height,
				a[backend.AttrMaxTexture2DLinearWidth], a[backend.AttrMaxTexture2DLinearHeight])
		case res.Pitch%uint64(a[backend.AttrTexturePitchAlignment]) != 0:
			return nil, nil, cudaerr.InvalidValue, fmt.Sprintf("pitch %d is not a multiple of the device's texture pitch alignment (%d bytes)", res.Pitch, a[backend.AttrTexturePitchAlignment])
		case res.Pitch > uint64(a[backend.AttrMaxTexture2DLinearPitch]):
			return nil, nil, cudaerr.InvalidValue, fmt.Sprintf("pitch %d exceeds the device's %d", res.Pitch, a[backend.AttrMaxTexture2DLinearPitch])
		case res.Width*es > res.Pitch:
			return nil, nil, cudaerr.InvalidValue, fmt.Sprintf("rows of %d elements of %s (%d bytes) do not fit the pitch %d", res.Width, res.Format, res.Width*es, res.Pitch)
		}
		span = res.Pitch*(res.Height-1) + res.Width*es
	}
	if _, detail := d.kernelView(res.Ptr, span); detail != "" {
		return nil, nil, cudaerr.InvalidValue, fmt.Sprintf("the resource's %d bytes at %#x: %s", span, uint64(res.Ptr), detail)
	}
	return nil, nil, 0, ""
}

// linearMaxWidth is the most elements a linear texture spans (an H100's figure, any format).
func (d *device) linearMaxWidth() uint64 { return uint64(d.attrs[backend.AttrMaxTexture1DLinearWidth]) }

// CreateTextureObject checks the descriptors as the runtime does and makes a texture object.
func (d *device) CreateTextureObject(res backend.ResourceDesc, tex backend.TextureDesc, view backend.ResourceViewDesc) (cuda.TextureObject, error) {
	const op = "cudaCreateTextureObject"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	arr, mip, code, why := d.checkResource(res, false)
	if why != "" {
		return 0, d.fail(op, code, "%s", why)
	}
	for i, m := range [3]int32{tex.AddressX, tex.AddressY, tex.AddressZ} {
		if m < backend.AddressWrap || m > backend.AddressBorder {
			return 0, d.fail(op, cudaerr.InvalidValue, "address mode %d of dimension %d is not wrap (0), clamp (1), mirror (2) or border (3)", m, i)
		}
	}
	switch {
	case tex.Filter != backend.FilterPoint && tex.Filter != backend.FilterLinear:
		return 0, d.fail(op, cudaerr.InvalidValue, "filter mode %d is not point (0) or linear (1)", tex.Filter)
	case tex.MipmapFilter != backend.FilterPoint && tex.MipmapFilter != backend.FilterLinear:
		return 0, d.fail(op, cudaerr.InvalidValue, "mipmap filter mode %d is not point (0) or linear (1)", tex.MipmapFilter)
	case tex.Read != backend.ReadElementType && tex.Read != backend.ReadNormalizedFloat:
		return 0, d.fail(op, cudaerr.InvalidValue, "read mode %d is not element type (0) or normalized float (1)", tex.Read)
	case view != (backend.ResourceViewDesc{}) && res.Type != backend.ResourceArray && res.Type != backend.ResourceMipmapped:
		return 0, d.fail(op, cudaerr.InvalidValue, "a resource view needs an array or mipmapped array resource")
	case tex.SeamlessCubemap != 0 && !isCubemap(arr, mip):
		return 0, d.fail(op, cudaerr.InvalidValue, "seamless cubemap filtering needs a cubemap array")
	}
	if view != (backend.ResourceViewDesc{}) {
		if code, why := checkView(view, arr, mip); why != "" {
			return 0, d.fail(op, code, "%s", why)
		}
	}
	d.tex.mu.Lock()
	defer d.tex.mu.Unlock()
	if d.tex.texs == nil {
		d.tex.texs = map[cuda.TextureObject]*simTexture{}
	}
	h := cuda.TextureObject(d.newObjectHandle())
	d.tex.texs[h] = &simTexture{res: res, tex: tex, view: view, arr: arr, mip: mip}
	return h, nil
}

func isCubemap(a *simArray, m *simMipmapped) bool {
	if m != nil && len(m.levels) > 0 {
		a = m.levels[0]
	}
	return a != nil && a.flags&backend.ArrayCubemap != 0
}

// DestroyTextureObject destroys a texture object; a handle that names none is
// cudaerr.InvalidValue.
func (d *device) DestroyTextureObject(t cuda.TextureObject) error {
	const op = "cudaDestroyTextureObject"
	if err := d.alive(op); err != nil {
		return err
	}
	d.tex.mu.Lock()
	defer d.tex.mu.Unlock()
	if d.tex.texs[t] == nil {
		return d.fail(op, cudaerr.InvalidValue, "texture object %#x is not a live texture object of device %d", uint64(t), d.ordinal)
	}
	delete(d.tex.texs, t)
	return nil
}

func (d *device) liveTexture(op string, t cuda.TextureObject) (*simTexture, error) {
	if err := d.alive(op); err != nil {
		return nil, err
	}
	if x := d.lookupTexture(t); x != nil {
		return x, nil
	}
	return nil, d.fail(op, cudaerr.InvalidValue, "texture object %#x is not a live texture object of device %d", uint64(t), d.ordinal)
}

// TextureObjectResourceDesc is the resource a texture object was made over.
func (d *device) TextureObjectResourceDesc(t cuda.TextureObject) (backend.ResourceDesc, error) {
	x, err := d.liveTexture("cudaGetTextureObjectResourceDesc", t)
	if err != nil {
		return backend.ResourceDesc{}, err
	}
	return x.res, nil
}

// TextureObjectTextureDesc is how a texture object samples, with a zero border colour as the
// runtime reports it (it does not give back the one the texture was made with).
func (d *device) TextureObjectTextureDesc(t cuda.TextureObject) (backend.TextureDesc, error) {
	x, err := d.liveTexture("cudaGetTextureObjectTextureDesc", t)
	if err != nil {
		return backend.TextureDesc{}, err
	}
	tex := x.tex
	tex.BorderR, tex.BorderG, tex.BorderB, tex.BorderA = 0, 0, 0, 0
	return tex, nil
}

// TextureObjectViewDesc is a texture object's resource view (zero without one).
func (d *device) TextureObjectViewDesc(t cuda.TextureObject) (backend.ResourceViewDesc, error) {
	x, err := d.liveTexture("cudaGetTextureObjectResourceViewDesc", t)
	if err != nil {
		return backend.ResourceViewDesc{}, err
	}
	return x.view, nil
}

// CreateSurfaceObject makes a surface object over an array made with the surface load/store
// flag.
func (d *device) CreateSurfaceObject(res backend.ResourceDesc) (cuda.SurfaceObject, error) {
	const op = "cudaCreateSurfaceObject"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	arr, _, code, why := d.checkResource(res, true)
	if why != "" {
		return 0, d.fail(op, code, "%s", why)
	}
	d.tex.mu.Lock()
	defer d.tex.mu.Unlock()
	if d.tex.surfs == nil {
		d.tex.surfs = map[cuda.SurfaceObject]*simSurface{}
	}
	h := cuda.SurfaceObject(d.newObjectHandle())
	d.tex.surfs[h] = &simSurface{res: res, arr: arr}
	return h, nil
}

// DestroySurfaceObject destroys a surface object.
func (d *device) DestroySurfaceObject(s cuda.SurfaceObject) error {
	const op = "cudaDestroySurfaceObject"
	if err := d.alive(op); err != nil {
		return err
	}
	d.tex.mu.Lock()
	defer d.tex.mu.Unlock()
	if d.tex.surfs[s] == nil {
		return d.fail(op, cudaerr.InvalidValue, "surface object %#x is not a live surface object of device %d", uint64(s), d.ordinal)
	}
	delete(d.tex.surfs, s)
	return nil
}

// SurfaceObjectResourceDesc is the resource a surface object was made over.
func (d *device) SurfaceObjectResourceDesc(s cuda.SurfaceObject) (backend.ResourceDesc, error) {
	const op = "cudaGetSurfaceObjectResourceDesc"
	if err := d.alive(op); err != nil {
		return backend.ResourceDesc{}, err
	}
	x := d.lookupSurface(s)
	if x == nil {
		return backend.ResourceDesc{}, d.fail(op, cudaerr.InvalidValue, "surface object %#x is not a live surface object of device %d", uint64(s), d.ordinal)
	}
	return x.res, nil
}

// Texture1DLinearMaxWidth is the most elements of f a linear texture spans; an invalid
// format is cudaerr.InvalidChannelDescriptor.
func (d *device) Texture1DLinearMaxWidth(f cuda.ChannelFormat) (uint64, error) {
	const op = "cudaDeviceGetTexture1DLinearMaxWidth"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	if err := f.Validate(); err != nil {
		return 0, d.fail(op, cudaerr.InvalidChannelDescriptor, "%v", err)
	}
	return d.linearMaxWidth(), nil
}
