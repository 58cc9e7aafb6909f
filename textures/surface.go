package textures

import (
	"context"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Surface is a surface object: pass it (or its Object) to a kernel taking a
// cudaSurfaceObject_t, which reads and writes the array with surf2Dread, surf2Dwrite and
// their siblings (x in bytes). Its methods are safe for concurrent use.
type Surface core.TexObject

func (s *Surface) core() *core.TexObject { return (*core.TexObject)(s) }

// NewSurface makes a surface over res, which must be an array made with the surface
// load/store flag (cudaCreateSurfaceObject), and returns once it exists. Linear memory, and an
// array without the flag, are refused with an error saying so. Close it before the array.
func NewSurface(ctx context.Context, dev *device.Device, res Resource) (*Surface, error) {
	if dev == nil {
		return nil, invalid("textures.NewSurface on a nil device")
	}
	if res.err == nil && res.mem != nil {
		return nil, invalid("a surface reads and writes a CUDA array made with the surface load/store flag, not %s memory",
			map[ResourceType]string{LinearResource: "linear", Pitch2DResource: "pitched"}[res.Type()])
	}
	if res.err == nil && res.desc.Type == backend.ResourceArray && res.flags&backend.ArraySurfaceLoadStore == 0 {
		return nil, invalid("a surface needs an array made with alloc.SurfaceLoadStore (cudaArraySurfaceLoadStore): this one was made without it")
	}
	if res.err == nil && res.desc.Type == backend.ResourceMipmapped {
		return nil, invalid("a surface reads and writes one array: take a level of the mipmapped array")
	}
	or, err := res.object()
	if err != nil {
		return nil, err
	}
	s := &Surface{}
	if err := core.NewTexObject(ctx, (*core.Device)(dev), s.core(), true, or, backend.TextureDesc{}, backend.ResourceViewDesc{}); err != nil {
		return nil, err
	}
	return s, nil
}

// Object is the surface object's value, as a kernel's cudaSurfaceObject_t parameter takes it.
// A launch given the Object rather than the *Surface is not checked against a closed surface
// or array.
func (s *Surface) Object() cuda.SurfaceObject { return cuda.SurfaceObject(s.core().Handle()) }

// Device is the surface's device.
func (s *Surface) Device() *device.Device { return (*device.Device)(s.core().Device()) }

// Closed reports whether the surface was closed.
func (s *Surface) Closed() bool { return s.core().Closed() }

// Close destroys the surface (cudaDestroySurfaceObject) once the kernels queued so far have
// run, and returns once it is destroyed. Closing twice is an ErrClosed error.
func (s *Surface) Close(ctx context.Context) error { return s.core().Close(ctx) }

// Resource is the resource the runtime says the surface reads and writes
// (cudaGetSurfaceObjectResourceDesc).
func (s *Surface) Resource(ctx context.Context) (ResourceDesc, error) {
	r, err := s.core().ObjectResource(ctx)
	return resourceDescOf(r), err
}
