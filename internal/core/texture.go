package core

import (
	"context"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// KernelObject is a texture or surface object a kernel launch takes as an argument: the
// launch checks that it and the memory it reads are still open, and passes its handle.
type KernelObject interface {
	kernelObject() *TexObject
}

// objHead is a TexObject's first field, of no size: its method finds the object it heads, so a
// face type defined over TexObject is a KernelObject.
type objHead struct{}

func (h *objHead) kernelObject() *TexObject { return (*TexObject)(unsafe.Pointer(h)) }

// Holder is what a texture or surface reads besides linear memory (a CUDA array): the object
// checks it is still open when it is made and when a kernel is given the object.
type Holder interface {
	// HeldHandle is the resource's handle on the actor thread, or an error saying why it
	// cannot be used (closed, another device's).
	HeldHandle(d *Device) (uintptr, error)
	// Closed reports whether the resource was freed.
	Closed() bool
}

// TexObject is a texture or surface object: the state textures.Texture and textures.Surface are
// faces over.
type TexObject struct {
	objHead
	dev     *Device
	h       uint64
	surface bool
	what    string  // "texture" or "surface", for errors
	buf     *Buffer // the linear memory the object reads, or nil
	held    Holder  // the array it reads, or nil
	closed  atomic.Bool
	// border and view are what the texture was made with: the runtime does not report them
	// (see TextureDesc and ViewDesc).
	border [4]float32
	view   backend.ResourceViewDesc
}

// ObjectResource is what NewTexObject reads: a resource descriptor whose address (for linear
// and pitch2D resources) is m's, or whose array handle (for array resources) is held's.
type ObjectResource struct {
	Desc backend.ResourceDesc
	Mem  Mem
	Held Holder
}

// NewTexObject makes a texture object (surface false) or a surface object over res into o, a
// zero TexObject the caller holds, and returns once it exists. The resource is checked first
// for what the runtime would refuse without saying why: memory closed or of another device,
// misaligned addresses and pitches, too many elements.
func NewTexObject(ctx context.Context, d *Device, o *TexObject, surface bool, res ObjectResource, tex backend.TextureDesc, view backend.ResourceViewDesc) error {
	what := "texture"
	if surface {
		what = "surface"
	}
	if d == nil {
		return Invalid("%s on a nil device", what)
	}
	_, err := Make(ctx, d, func(rt backend.Device, _ *Tracker) (*TexObject, error) {
		desc := res.Desc
		var buf *Buffer
		switch {
		case res.Mem != nil:
			p, n, err := d.Resolve(what+" resource", res.Mem)
			if err != nil {
				return nil, err
			}
			buf, _, _ = Region(res.Mem)
			desc.Ptr = p
			if err := checkLinearResource(rt, d, what, &desc, n); err != nil {
				return nil, err
			}
		case res.Held != nil:
			h, err := res.Held.HeldHandle(d)
			if err != nil {
				return nil, err
			}
			if desc.Type == backend.ResourceMipmapped {
				desc.Mipmapped = backend.MipmappedArray(h)
			} else {
				desc.Array = backend.Array(h)
			}
		default:
			return nil, Invalid("%s over no resource", what)
		}
		var h uint64
		if surface {
			s, err := rt.CreateSurfaceObject(desc)
			if err != nil {
				return nil, fmt.Errorf("gpuactor: create %s object on device %d: %w", what, d.ordinal, err)
			}
			h = uint64(s)
		} else {
			t, err := rt.CreateTextureObject(desc, tex, view)
			if err != nil {
				return nil, fmt.Errorf("gpuactor: create %s object on device %d: %w", what, d.ordinal, err)
			}
			h = uint64(t)
		}
		o.dev, o.h, o.surface, o.what, o.buf, o.held = d, h, surface, what, buf, res.Held
		if !surface {
			o.border, o.view = [4]float32{tex.BorderR, tex.BorderG, tex.BorderB, tex.BorderA}, view
		}
		return o, nil
	}, func(rt backend.Device, _ *Tracker, o *TexObject) { _ = o.destroy(rt) })
	return err
}

// checkLinearResource checks a linear or pitch2D resource of n bytes at desc.Ptr against the
// device's texture limits, so that a mistake gets an error naming it rather than the runtime's
// bare invalid value.
func checkLinearResource(rt backend.Device, d *Device, what string, desc *backend.ResourceDesc, n uint64) error {
	if err := desc.Format.Validate(); err != nil {
		return Invalid("%s: %v", what, err)
	}
	es := desc.Format.Size()
	attr := func(a backend.Attr) uint64 {
		v, err := rt.Attribute(a)
		if err != nil || v <= 0 {
			return 0
		}
		return uint64(v)
	}
	if al := attr(backend.AttrTextureAlignment); al > 0 && uint64(desc.Ptr)%al != 0 {
		return Invalid("%s: the memory at %#x is not aligned to the device's texture alignment (%d bytes): use the start of an allocation",
			what, uint64(desc.Ptr), al)
	}
	switch desc.Type {
	case backend.ResourceLinear:
		if desc.Size == 0 {
			desc.Size = n - n%es
		}
		if desc.Size == 0 || desc.Size > n {
			return OutOfRange("%s: a linear resource of %d bytes over %d bytes of memory", what, desc.Size, n)
		}
		if max, err := rt.Texture1DLinearMaxWidth(desc.Format); err == nil && desc.Size/es > max {
			return OutOfRange("%s: %d elements of %s, more than the device's %d for a texture over linear memory",
				what, desc.Size/es, desc.Format, max)
		}
	case backend.ResourcePitch2D:
		if desc.Width == 0 || desc.Height == 0 {
			return Invalid("%s: a pitch2D resource of %d×%d elements", what, desc.Width, desc.Height)
		}
		if desc.Width > desc.Pitch/es {
			return Invalid("%s: rows of %d elements of %s do not fit the pitch of %d bytes", what, desc.Width, desc.Format, desc.Pitch)
		}
		if al := attr(backend.AttrTexturePitchAlignment); al > 0 && desc.Pitch%al != 0 {
			return Invalid("%s: pitch %d is not a multiple of the device's texture pitch alignment (%d bytes)", what, desc.Pitch, al)
		}
		if w, h := attr(backend.AttrMaxTexture2DLinearWidth), attr(backend.AttrMaxTexture2DLinearHeight); w > 0 && (desc.Width > w || desc.Height > h) {
			return OutOfRange("%s: %d×%d elements exceed the device's %d×%d for a pitch2D texture", what, desc.Width, desc.Height, w, h)
		}
		if span := desc.Pitch*(desc.Height-1) + desc.Width*es; span > n {
			return OutOfRange("%s: %d rows of pitch %d span %d bytes, the memory has %d", what, desc.Height, desc.Pitch, span, n)
		}
	}
	return nil
}

// destroy destroys the runtime's object; on the actor thread.
func (o *TexObject) destroy(rt backend.Device) error {
	if o.surface {
		return rt.DestroySurfaceObject(cuda.SurfaceObject(o.h))
	}
	return rt.DestroyTextureObject(cuda.TextureObject(o.h))
}

// Handle is the object's value as a kernel takes it (cudaTextureObject_t or
// cudaSurfaceObject_t).
func (o *TexObject) Handle() uint64 {
	if o == nil {
		return 0
	}
	return o.h
}

// Device is the object's device (nil for a nil object).
func (o *TexObject) Device() *Device {
	if o == nil {
		return nil
	}
	return o.dev
}

// Closed reports whether the object was destroyed.
func (o *TexObject) Closed() bool { return o == nil || o.closed.Load() }

// usable says why o cannot be given to a kernel: destroyed, or its memory freed.
func (o *TexObject) usable() error {
	if o == nil || o.dev == nil {
		return Invalid("a nil texture or surface object")
	}
	if o.closed.Load() {
		return Closed("%s object %#x used after Close", o.what, o.h)
	}
	if o.buf != nil && o.buf.Closed() {
		return Closed("%s object %#x reads buffer %#x, which was closed: close the %s first", o.what, o.h, uint64(o.buf.ptr), o.what)
	}
	if o.held != nil && o.held.Closed() {
		return Closed("%s object %#x reads an array that was closed: close the %s first", o.what, o.h, o.what)
	}
	return nil
}

// Close destroys the object once the GPU has passed the work queued so far on every stream of
// the device (kernels queued with it still read it), and returns once it is destroyed. Closing
// twice is an ErrClosed error.
func (o *TexObject) Close(ctx context.Context) error {
	if o == nil || o.dev == nil {
		return Invalid("Close of a nil texture or surface object")
	}
	d := o.dev
	return RunTracked(ctx, d, func(rt backend.Device, tr *Tracker, done func(error)) error {
		if o.closed.Swap(true) {
			return Closed("%s object %#x closed twice", o.what, o.h)
		}
		tr.AfterAll(func(err error) {
			if derr := o.destroy(d.rt); derr != nil {
				err = derr
			}
			done(err)
		})
		return nil
	}).Wait(ctx)
}

// ObjectResource is the resource descriptor the runtime holds for the object
// (cudaGetTextureObjectResourceDesc or cudaGetSurfaceObjectResourceDesc).
func (o *TexObject) ObjectResource(ctx context.Context) (backend.ResourceDesc, error) {
	return objectQuery(ctx, o, func(rt backend.Device) (backend.ResourceDesc, error) {
		if o.surface {
			return rt.SurfaceObjectResourceDesc(cuda.SurfaceObject(o.h))
		}
		return rt.TextureObjectResourceDesc(cuda.TextureObject(o.h))
	})
}

// TextureDesc is how the texture object samples (cudaGetTextureObjectTextureDesc), with the
// border colour it was made with: the runtime does not report that one (backend.TextureDesc
// says so).
func (o *TexObject) TextureDesc(ctx context.Context) (backend.TextureDesc, error) {
	return objectQuery(ctx, o, func(rt backend.Device) (backend.TextureDesc, error) {
		t, err := rt.TextureObjectTextureDesc(cuda.TextureObject(o.h))
		t.BorderR, t.BorderG, t.BorderB, t.BorderA = o.border[0], o.border[1], o.border[2], o.border[3]
		return t, err
	})
}

// ViewDesc is the texture object's resource view (cudaGetTextureObjectResourceViewDesc), zero
// for one made without a view: the runtime is not asked then, as what it gives back for such
// a texture is undefined.
func (o *TexObject) ViewDesc(ctx context.Context) (backend.ResourceViewDesc, error) {
	return objectQuery(ctx, o, func(rt backend.Device) (backend.ResourceViewDesc, error) {
		if o.view == (backend.ResourceViewDesc{}) {
			return backend.ResourceViewDesc{}, nil
		}
		return rt.TextureObjectViewDesc(cuda.TextureObject(o.h))
	})
}

func objectQuery[T any](ctx context.Context, o *TexObject, q func(rt backend.Device) (T, error)) (T, error) {
	var zero T
	if o == nil || o.dev == nil {
		return zero, Invalid("query of a nil texture or surface object")
	}
	return Run(ctx, o.dev, func(rt backend.Device, _ *Tracker) (T, error) {
		if o.closed.Load() {
			return zero, Closed("%s object %#x used after Close", o.what, o.h)
		}
		v, err := q(rt)
		if err != nil {
			return zero, fmt.Errorf("gpuactor: %s object %#x on device %d: %w", o.what, o.h, o.dev.ordinal, err)
		}
		return v, nil
	}).Await(ctx)
}

// Texture1DLinearMaxWidth is the most elements of format f a texture over linear memory of d
// may span (cudaDeviceGetTexture1DLinearMaxWidth).
func Texture1DLinearMaxWidth(ctx context.Context, d *Device, f cuda.ChannelFormat) (uint64, error) {
	if err := f.Validate(); err != nil {
		return 0, Invalid("%v", err)
	}
	return Run(ctx, d, func(rt backend.Device, _ *Tracker) (uint64, error) {
		return rt.Texture1DLinearMaxWidth(f)
	}).Await(ctx)
}

// objectArg packs a texture or surface object given to kernel k as argument i.
func (d *Device) objectArg(k *Kernel, i int, v KernelObject) (backend.Arg, error) {
	o := v.kernelObject()
	if err := o.usable(); err != nil {
		return backend.Arg{}, fmt.Errorf("kernel %s argument %d: %w", k.name, i, err)
	}
	if o.dev != d {
		return backend.Arg{}, fmt.Errorf("%w: kernel %s argument %d is a %s object of device %d, launched on device %d", ErrWrongDevice, k.name, i, o.what, o.dev.ordinal, d.ordinal)
	}
	kind := cuda.Texture
	if o.surface {
		kind = cuda.Surface
	}
	return backend.Arg{Kind: kind, Bits: o.h}, nil
}
