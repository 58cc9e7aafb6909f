package interop

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Graphics interoperability: OpenGL buffers and images and EGL images registered with a device
// (cudaGraphicsGLRegisterBuffer, cudaGraphicsGLRegisterImage, cudaGraphicsEGLRegisterImage),
// mapped for CUDA's use on a stream and unmapped for the graphics API's. See
// docs/design/graphics-interop.md for the thread rule behind GL and Run.

// ErrGraphicsNotSupported is wrapped by the errors of graphics calls the backend cannot make:
// the simulator, which has no OpenGL or EGL, and isolated devices, whose worker process has no
// GL context. The device stays usable.
var ErrGraphicsNotSupported = errors.New("gpuactor/interop: graphics interoperability is not supported")

// ErrNotMapped is wrapped by the errors of uses of a graphics resource that need it mapped
// (its buffer, arrays or EGL frame) when it is not, and of an Unmap of a mapping already
// unmapped.
var ErrNotMapped = errors.New("gpuactor/interop: graphics resource not mapped")

// ErrAlreadyMapped is wrapped by the errors of a MapResources of a resource that is mapped
// already, and of a Close of a mapped resource.
var ErrAlreadyMapped = errors.New("gpuactor/interop: graphics resource already mapped")

// graphicsError wraps a runtime error of call, marking the not-supported case.
func graphicsError(call string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, cudaerr.NotSupported) {
		return fmt.Errorf("%w: %s: %w", ErrGraphicsNotSupported, call, err)
	}
	return fmt.Errorf("gpuactor/interop: %s: %w", call, err)
}

// RegisterFlag says how CUDA will use a registered resource (cudaGraphicsRegisterFlags).
type RegisterFlag uint32

// The register flags.
const (
	// RegisterReadOnly: CUDA only reads the resource.
	RegisterReadOnly = RegisterFlag(backend.GraphicsRegisterReadOnly)
	// RegisterWriteDiscard: CUDA overwrites the whole resource, never reading what was there.
	RegisterWriteDiscard = RegisterFlag(backend.GraphicsRegisterWriteDiscard)
	// RegisterSurfaceLoadStore: surfaces may bind the resource's arrays, for kernels to write.
	RegisterSurfaceLoadStore = RegisterFlag(backend.GraphicsRegisterSurfaceLoadStore)
	// RegisterTextureGather: textures may gather from the resource's arrays.
	RegisterTextureGather = RegisterFlag(backend.GraphicsRegisterTextureGather)
)

const registerFlagsKnown = RegisterReadOnly | RegisterWriteDiscard | RegisterSurfaceLoadStore | RegisterTextureGather

// MapFlag says how CUDA uses a resource while it is mapped (cudaGraphicsMapFlags).
type MapFlag uint32

// The map flags.
const (
	MapReadWrite    = MapFlag(backend.GraphicsMapNone)         // CUDA reads and writes it (the default)
	MapReadOnly     = MapFlag(backend.GraphicsMapReadOnly)     // CUDA only reads it
	MapWriteDiscard = MapFlag(backend.GraphicsMapWriteDiscard) // CUDA overwrites all of it
)

// resourceKind is what a GraphicsResource registers.
type resourceKind int

const (
	kindGLBuffer resourceKind = iota + 1
	kindGLImage
	kindEGLImage
	kindEGLFrame // a frame acquired from an EGL stream (EGLStreamConsumer.Acquire)
)

func (k resourceKind) String() string {
	switch k {
	case kindGLBuffer:
		return "GL buffer"
	case kindGLImage:
		return "GL image"
	case kindEGLImage:
		return "EGL image"
	case kindEGLFrame:
		return "EGL stream frame"
	}
	return "graphics resource"
}

// GraphicsResource is a GL buffer, GL image or EGL image registered with a device. Map a GL
// resource with MapResources to reach it from CUDA (Buffer, Array, MipmappedArray); an EGL
// image needs no map (the runtime maps it when it registers it: EGLFrame, Array and
// MipmappedArray reach it at once, and the caller orders GL's work and CUDA's, with glFinish
// or an EGL sync before and a stream synchronization after). Close unregisters it. Its
// methods are safe for concurrent use.
type GraphicsResource struct {
	dev    *core.Device
	gl     *GL // the GL context of a GL resource; nil for EGL
	h      backend.GraphicsResource
	kind   resourceKind
	name   uint32      // the GL object name, for errors
	flags  uint32      // the register flags
	closed atomic.Bool // set on the actor thread
	// On the actor thread only:
	mapped *Mapping // the mapping that holds it mapped, or nil
	lent   lentViews
}

// lentViews are the objects a mapped resource lends to CUDA's users: a buffer, arrays, a
// mipmapped array. Unmap revokes them.
type lentViews struct {
	buf    *device.Buffer
	planes []*device.Buffer // pitched EGL frame planes
	arrays map[[2]uint32]*core.Array
	mip    *core.MipmappedArray
}

// revoke ends every loan of v: later uses of its objects are ErrClosed errors. Actor thread
// only.
func (v *lentViews) revoke(d *core.Device) {
	if v.buf != nil {
		_ = d.FreeNow((*core.Buffer)(v.buf)) // its release frees nothing; closed by its holder already: fine
		v.buf = nil
	}
	for _, b := range v.planes {
		_ = d.FreeNow((*core.Buffer)(b))
	}
	v.planes = nil
	for k, a := range v.arrays {
		a.Revoke()
		delete(v.arrays, k)
	}
	if v.mip != nil {
		v.mip.Revoke()
		v.mip = nil
	}
}

// String names the resource in errors: "GL buffer 5", "GL image 3", "EGL image".
func (r *GraphicsResource) String() string {
	if r == nil {
		return "nil graphics resource"
	}
	switch r.kind {
	case kindGLBuffer, kindGLImage:
		return fmt.Sprintf("%s %d", r.kind, r.name)
	}
	return r.kind.String()
}

// Device is the device the resource is registered with (nil for a nil resource).
func (r *GraphicsResource) Device() *device.Device {
	if r == nil {
		return nil
	}
	return (*device.Device)(r.dev)
}

// check refuses a nil or closed resource; what names the call.
func (r *GraphicsResource) check(what string) error {
	if r == nil || r.dev == nil {
		return core.Invalid("%s of a nil graphics resource", what)
	}
	if r.closed.Load() {
		return core.Closed("%s of %v after its Close", what, r)
	}
	return nil
}

// current makes the resource's GL context current on the actor thread, for a GL resource.
func (r *GraphicsResource) current() error {
	if r.gl == nil {
		return nil
	}
	return r.gl.makeCurrent()
}

// SetMapFlags sets how CUDA uses the resource while mapped, from its next MapResources on
// (cudaGraphicsResourceSetMapFlags); it returns once set. An unknown flag is an
// ErrInvalidArgument error, a closed resource ErrClosed.
func (r *GraphicsResource) SetMapFlags(ctx context.Context, f MapFlag) error {
	if err := r.check("SetMapFlags"); err != nil {
		return err
	}
	if f != MapReadWrite && f != MapReadOnly && f != MapWriteDiscard {
		return core.Invalid("SetMapFlags of unknown map flag %#x", uint32(f))
	}
	return core.Do(ctx, r.dev, func(rt backend.Device, _ *core.Tracker) error {
		if err := r.check("SetMapFlags"); err != nil {
			return err
		}
		if err := r.current(); err != nil {
			return err
		}
		return graphicsError("SetMapFlags", rt.GraphicsResourceSetMapFlags(r.h, uint32(f)))
	})
}

// Close unregisters the resource (cudaGraphicsUnregisterResource) and returns once it is
// unregistered; the GL or EGL object lives on. A mapped resource is refused with an
// ErrAlreadyMapped error (Unmap it first); closing twice is an ErrClosed error. The device's
// Close (or the GL's Detach, for a GL resource) unregisters the resources still registered.
func (r *GraphicsResource) Close(ctx context.Context) error {
	if err := r.check("Close"); err != nil {
		return err
	}
	if r.kind == kindEGLFrame {
		return core.Invalid("Close of an EGL stream frame: give it back with Release")
	}
	return core.Do(ctx, r.dev, func(rt backend.Device, tr *core.Tracker) error {
		if err := r.check("Close"); err != nil {
			return err
		}
		if r.mapped != nil {
			return fmt.Errorf("%w: Close of %v while it is mapped: Unmap it first", ErrAlreadyMapped, r)
		}
		if r.gl != nil {
			delete(r.gl.resources, r)
		} else {
			tr.Disown(r)
		}
		return r.unregister(rt)
	})
}

// unregister unmaps the resource if it is mapped and unregisters it, on the actor thread:
// from Close, or when its GL detaches or its device closes.
func (r *GraphicsResource) unregister(rt backend.Device) error {
	if r.closed.Swap(true) {
		return nil
	}
	var errs []error
	if err := r.current(); err != nil {
		return err
	}
	if m := r.mapped; m != nil {
		errs = append(errs, m.unmapNow(rt))
	}
	r.lent.revoke(r.dev) // an EGL image's views, which no unmap revokes
	errs = append(errs, graphicsError("unregistering "+r.String(), rt.GraphicsUnregisterResource(r.h)))
	return errors.Join(errs...)
}

// lendArray makes the alloc.Array of array index at level of the mapped resource, once per
// mapping. Actor thread only.
func (r *GraphicsResource) lendArray(rt backend.Device, h backend.Array, key [2]uint32) (*alloc.Array, error) {
	if a := r.lent.arrays[key]; a != nil {
		return (*alloc.Array)(a), nil
	}
	info, err := rt.ArrayInfo(h)
	if err != nil {
		return nil, graphicsError("the array of "+r.String(), err)
	}
	// What the resource was registered for, the array is made for, whatever the runtime
	// reports of an array it did not allocate: surfaces and gathers check these flags.
	if r.flags&backend.GraphicsRegisterSurfaceLoadStore != 0 {
		info.Flags |= backend.ArraySurfaceLoadStore
	}
	if r.flags&backend.GraphicsRegisterTextureGather != 0 {
		info.Flags |= backend.ArrayTextureGather
	}
	a := r.dev.LendArray(h, info, "a mapped graphics resource")
	if r.lent.arrays == nil {
		r.lent.arrays = map[[2]uint32]*core.Array{}
	}
	r.lent.arrays[key] = a
	return (*alloc.Array)(a), nil
}
