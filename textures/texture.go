package textures

import (
	"context"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/core"
)

func invalid(format string, args ...any) error { return core.Invalid(format, args...) }

// Texture is a texture object: pass it (or its Object) to a kernel taking a
// cudaTextureObject_t. Its methods are safe for concurrent use.
type Texture core.TexObject

func (t *Texture) core() *core.TexObject { return (*core.TexObject)(t) }

// Option configures New.
type Option func(*config)

type config struct{ view View }

// WithView gives the texture a resource view (array resources only).
func WithView(v View) Option { return func(c *config) { c.view = v } }

// New makes a texture over res on dev, sampled as desc says (cudaCreateTextureObject), and
// returns once it exists. Bad input is refused with an error naming it: a resource of
// another device or already closed, an invalid channel format, linear memory not at the
// device's texture alignment or longer than MaxLinearWidth, a pitch not a multiple of the
// device's texture pitch alignment, a Desc field out of range. Close it before the memory it
// reads.
func New(ctx context.Context, dev *device.Device, res Resource, desc Desc, opts ...Option) (*Texture, error) {
	if dev == nil {
		return nil, invalid("textures.New on a nil device")
	}
	var c config
	for _, o := range opts {
		o(&c)
	}
	if err := desc.validate(); err != nil {
		return nil, err
	}
	or, err := res.object()
	if err != nil {
		return nil, err
	}
	d := (*core.Device)(dev)
	if owner, err := res.owner(); err != nil {
		return nil, err
	} else if owner != nil && owner != d {
		return nil, core.WrongDevice("texture resource", owner, d)
	}
	t := &Texture{}
	if err := core.NewTexObject(ctx, d, t.core(), false, or, desc.backend(), c.view.backend()); err != nil {
		return nil, err
	}
	return t, nil
}

// Object is the texture object's value, as a kernel's cudaTextureObject_t parameter takes it
// (0 for a nil texture). A launch given the Object rather than the *Texture is not checked
// against a closed texture or memory.
func (t *Texture) Object() cuda.TextureObject { return cuda.TextureObject(t.core().Handle()) }

// Device is the texture's device.
func (t *Texture) Device() *device.Device { return (*device.Device)(t.core().Device()) }

// Closed reports whether the texture was closed.
func (t *Texture) Closed() bool { return t.core().Closed() }

// Close destroys the texture (cudaDestroyTextureObject) once the kernels queued so far have
// run, and returns once it is destroyed. Closing twice is an ErrClosed error.
func (t *Texture) Close(ctx context.Context) error { return t.core().Close(ctx) }

// Resource is the resource the runtime says the texture reads
// (cudaGetTextureObjectResourceDesc).
func (t *Texture) Resource(ctx context.Context) (ResourceDesc, error) {
	r, err := t.core().ObjectResource(ctx)
	return resourceDescOf(r), err
}

// Desc is how the runtime says the texture samples (cudaGetTextureObjectTextureDesc), with the
// border colour the texture was made with, which the runtime does not report.
func (t *Texture) Desc(ctx context.Context) (Desc, error) {
	d, err := t.core().TextureDesc(ctx)
	return descOf(d), err
}

// View is the texture's resource view (cudaGetTextureObjectResourceViewDesc), zero for a
// texture made without one (the runtime is not asked then: its answer is undefined).
func (t *Texture) View(ctx context.Context) (View, error) {
	v, err := t.core().ViewDesc(ctx)
	return viewOf(v), err
}

// MaxLinearWidth is the most elements of format f a texture over linear memory (FromLinear)
// may span on dev (cudaDeviceGetTexture1DLinearMaxWidth).
func MaxLinearWidth(ctx context.Context, dev *device.Device, f cuda.ChannelFormat) (uint64, error) {
	if dev == nil {
		return 0, invalid("MaxLinearWidth on a nil device")
	}
	return core.Texture1DLinearMaxWidth(ctx, (*core.Device)(dev), f)
}
