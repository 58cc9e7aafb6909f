package interop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// GLContext is an OpenGL context that can be made current on the calling OS thread and
// released from it: an EGL display, surface and context (eglMakeCurrent), or a GLX or WGL
// one. CUDA's GL calls need the context current on the thread that makes them, which is a
// device's actor thread: AttachGL hands the context to the device, which makes it current on
// that thread. A context is current on one thread at a time, so while it is attached the
// caller runs its own GL code through GL.Run, on the same thread, and never makes the context
// current elsewhere.
type GLContext interface {
	// MakeCurrent makes the context current on the calling thread.
	MakeCurrent() error
	// ReleaseCurrent makes no context current on the calling thread.
	ReleaseCurrent() error
}

// GL is a GL context attached to a device (AttachGL): GL objects of the context are registered
// with the device through it, and GL code runs on the device's thread through Run. Its
// methods are safe for concurrent use.
type GL struct {
	dev      *core.Device
	c        GLContext
	detached atomic.Bool
	// On the actor thread only:
	resources map[*GraphicsResource]struct{} // registered and not closed
}

// AttachGL attaches GL context c to dev: it makes c current on dev's actor thread and returns
// once it is. Every call of the returned GL that touches the context (registration, maps and
// unmaps of its resources, Run) makes c current on that thread first, so several contexts
// may be attached to one device; between those calls c may be current nowhere else. The
// device must be the one the context renders on: a context the runtime places on other
// devices (cudaGLGetDevices) is an ErrWrongDevice error naming them. A nil c is an
// ErrInvalidArgument error; MakeCurrent's error is returned as it is. Detach the context with Detach, or let dev's Close do it.
func AttachGL(ctx context.Context, dev *device.Device, c GLContext) (*GL, error) {
	if dev == nil {
		return nil, core.Invalid("AttachGL on a nil device")
	}
	if c == nil {
		return nil, core.Invalid("AttachGL of a nil GL context")
	}
	cd := (*core.Device)(dev)
	return core.Make(ctx, cd, func(rt backend.Device, tr *core.Tracker) (*GL, error) {
		if err := c.MakeCurrent(); err != nil {
			return nil, fmt.Errorf("gpuactor/interop: AttachGL: making the GL context current on device %d's thread: %w", cd.Ordinal(), err)
		}
		// A context of another GPU is refused here, by name, rather than by the first
		// registration. Where the runtime cannot say (the simulator, an isolated device, a
		// driver without the query) the registration's own check remains.
		if devs, err := rt.GLGetDevices(backend.GLDeviceListAll, 16); err == nil && len(devs) > 0 && !slices.Contains(devs, cd.Ordinal()) {
			_ = c.ReleaseCurrent()
			return nil, fmt.Errorf("%w: AttachGL: the GL context renders on device(s) %v, not on device %d", core.ErrWrongDevice, devs, cd.Ordinal())
		}
		g := &GL{dev: cd, c: c, resources: map[*GraphicsResource]struct{}{}}
		tr.Own(g, func() error { return g.detach(rt) })
		return g, nil
	}, func(rt backend.Device, tr *core.Tracker, g *GL) {
		tr.Disown(g)
		_ = g.detach(rt)
	})
}

// Device is the device the context is attached to.
func (g *GL) Device() *device.Device {
	if g == nil {
		return nil
	}
	return (*device.Device)(g.dev)
}

// check refuses a nil or detached GL.
func (g *GL) check(what string) error {
	if g == nil || g.dev == nil {
		return core.Invalid("%s of a nil GL", what)
	}
	if g.detached.Load() {
		return core.Closed("%s of a GL context after its Detach", what)
	}
	return nil
}

// makeCurrent makes the context current on the actor thread.
func (g *GL) makeCurrent() error {
	if err := g.c.MakeCurrent(); err != nil {
		return fmt.Errorf("gpuactor/interop: making the GL context current on device %d's thread: %w", g.dev.Ordinal(), err)
	}
	return nil
}

// Run runs fn on the device's thread with the GL context current, and returns fn's error once
// it has run: the way to call GL (create objects, draw, read pixels) while the context is
// attached. fn must not call gpuactor (the device's thread is busy running fn), must not
// make another context current and should return soon: the device's other work waits. A
// detached GL is an ErrClosed error.
func (g *GL) Run(ctx context.Context, fn func() error) error {
	if err := g.check("Run"); err != nil {
		return err
	}
	if fn == nil {
		return core.Invalid("Run of a nil function")
	}
	return core.Do(ctx, g.dev, func(_ backend.Device, _ *core.Tracker) error {
		if err := g.check("Run"); err != nil {
			return err
		}
		if err := g.makeCurrent(); err != nil {
			return err
		}
		return fn()
	})
}

// GLDevices is the devices (their ordinals) the GL context renders on (cudaGLGetDevices with
// cudaGLDeviceListAll), at most 16; it returns once the runtime has said.
func (g *GL) GLDevices(ctx context.Context) ([]int, error) {
	if err := g.check("GLDevices"); err != nil {
		return nil, err
	}
	return core.Run(ctx, g.dev, func(rt backend.Device, _ *core.Tracker) ([]int, error) {
		if err := g.makeCurrent(); err != nil {
			return nil, err
		}
		devs, err := rt.GLGetDevices(backend.GLDeviceListAll, 16)
		return devs, graphicsError("GLDevices", err)
	}).Await(ctx)
}

// Detach unregisters the resources registered through g that are still registered (unmapping
// the mapped ones first), releases the context from the device's thread and returns once it
// has. Detaching twice is an ErrClosed error.
func (g *GL) Detach(ctx context.Context) error {
	if err := g.check("Detach"); err != nil {
		return err
	}
	return core.Do(ctx, g.dev, func(rt backend.Device, tr *core.Tracker) error {
		if err := g.check("Detach"); err != nil {
			return err
		}
		tr.Disown(g)
		return g.detach(rt)
	})
}

// detach unregisters g's resources and releases the context; actor thread only.
func (g *GL) detach(rt backend.Device) error {
	if g.detached.Swap(true) {
		return nil
	}
	if err := g.makeCurrent(); err != nil {
		return err
	}
	var errs []error
	for r := range g.resources {
		errs = append(errs, r.unregister(rt))
		delete(g.resources, r)
	}
	if err := g.c.ReleaseCurrent(); err != nil {
		errs = append(errs, fmt.Errorf("gpuactor/interop: releasing the GL context from device %d's thread: %w", g.dev.Ordinal(), err))
	}
	return errors.Join(errs...)
}

// registerFlags checks and joins the flags.
func registerFlags(what string, flags []RegisterFlag) (uint32, error) {
	var f RegisterFlag
	for _, x := range flags {
		if x&^registerFlagsKnown != 0 {
			return 0, core.Invalid("%s with unknown register flag %#x", what, uint32(x))
		}
		f |= x
	}
	if f&RegisterReadOnly != 0 && f&RegisterWriteDiscard != 0 {
		return 0, core.Invalid("%s with both RegisterReadOnly and RegisterWriteDiscard", what)
	}
	return uint32(f), nil
}

// RegisterGLBuffer registers GL buffer object buffer (a name of g's context, made with
// glGenBuffers or glCreateBuffers and given storage) with g's device
// (cudaGraphicsGLRegisterBuffer) and returns once it is registered. Mapped, the resource's
// Buffer is the buffer's memory as a device.Buffer. Buffer 0 or an unknown flag is an
// ErrInvalidArgument error; a name the context does not know, the runtime's error
// (cudaerr.InvalidValue or cudaerr.InvalidGraphicsContext).
func RegisterGLBuffer(ctx context.Context, g *GL, buffer uint32, flags ...RegisterFlag) (*GraphicsResource, error) {
	return g.register(ctx, "RegisterGLBuffer", kindGLBuffer, buffer, 0, flags)
}

// GL texture and renderbuffer targets RegisterGLImage takes (GLenum values).
const (
	GLTexture2D        uint32 = 0x0DE1 // GL_TEXTURE_2D
	GLTextureRectangle uint32 = 0x84F5 // GL_TEXTURE_RECTANGLE
	GLTextureCubeMap   uint32 = 0x8513 // GL_TEXTURE_CUBE_MAP
	GLTexture3D        uint32 = 0x806F // GL_TEXTURE_3D
	GLTexture2DArray   uint32 = 0x8C1A // GL_TEXTURE_2D_ARRAY
	GLRenderbuffer     uint32 = 0x8D41 // GL_RENDERBUFFER
)

// RegisterGLImage registers GL texture or renderbuffer image of target (GLTexture2D,
// GLRenderbuffer, ...) of g's context with g's device (cudaGraphicsGLRegisterImage) and
// returns once it is registered. Mapped, the resource's Array is the image's storage as an
// alloc.Array. The image needs a format CUDA takes (GL_R32F, GL_RGBA8, GL_RGBA32F, ... : not a
// compressed or depth one) and, to be written by surfaces, RegisterSurfaceLoadStore. Image 0,
// an unknown target or flag is an ErrInvalidArgument error.
func RegisterGLImage(ctx context.Context, g *GL, image, target uint32, flags ...RegisterFlag) (*GraphicsResource, error) {
	switch target {
	case GLTexture2D, GLTextureRectangle, GLTextureCubeMap, GLTexture3D, GLTexture2DArray, GLRenderbuffer:
	default:
		return nil, core.Invalid("RegisterGLImage of image %d with unknown target %#x", image, target)
	}
	return g.register(ctx, "RegisterGLImage", kindGLImage, image, target, flags)
}

func (g *GL) register(ctx context.Context, what string, kind resourceKind, name, target uint32, flags []RegisterFlag) (*GraphicsResource, error) {
	if err := g.check(what); err != nil {
		return nil, err
	}
	if name == 0 {
		return nil, core.Invalid("%s of GL object 0, which names none", what)
	}
	f, err := registerFlags(what, flags)
	if err != nil {
		return nil, err
	}
	return core.Make(ctx, g.dev, func(rt backend.Device, _ *core.Tracker) (*GraphicsResource, error) {
		if err := g.check(what); err != nil {
			return nil, err
		}
		if err := g.makeCurrent(); err != nil {
			return nil, err
		}
		var h backend.GraphicsResource
		var err error
		if kind == kindGLBuffer {
			h, err = rt.GraphicsGLRegisterBuffer(name, f)
		} else {
			h, err = rt.GraphicsGLRegisterImage(name, target, f)
		}
		if err != nil {
			return nil, graphicsError(fmt.Sprintf("%s of %s %d", what, kind, name), err)
		}
		r := &GraphicsResource{dev: g.dev, gl: g, h: h, kind: kind, name: name, flags: f}
		g.resources[r] = struct{}{}
		return r, nil
	}, func(rt backend.Device, _ *core.Tracker, r *GraphicsResource) {
		delete(g.resources, r)
		_ = r.unregister(rt)
	})
}
