package interop

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// Mapping is a set of graphics resources mapped together by MapResources: while it lasts
// CUDA may use them (their Buffer, Array, MipmappedArray and EGLFrame) and the graphics API
// must not; Unmap gives them back. Its methods are safe for concurrent use.
type Mapping struct {
	dev *core.Device
	gl  *GL // the GL context of the GL resources, or nil
	res []*GraphicsResource
	// On the actor thread only:
	h        backend.Stream // the stream of the map
	unmapped bool
}

// MapResources maps res, resources registered with s's device, for CUDA
// (cudaGraphicsMapResources) in stream order: work queued on s afterwards sees what the
// graphics API wrote before the map, and the graphics API must not touch the resources until
// Unmap. It returns once the map is queued on s, with the resources' Buffer, Array,
// MipmappedArray and EGLFrame usable from then on by work ordered after it.
//
// Errors, each leaving every resource as it was: no resource, a nil one or the same one twice
// is an ErrInvalidArgument error; a resource of another device ErrWrongDevice; a closed one
// ErrClosed; one mapped already ErrAlreadyMapped; GL resources of two different GL contexts
// ErrInvalidArgument (map them separately); a closed stream ErrClosed.
func MapResources(ctx context.Context, s *streams.Stream, res ...*GraphicsResource) (*Mapping, error) {
	if s == nil {
		return nil, core.Invalid("MapResources on a nil stream")
	}
	if len(res) == 0 {
		return nil, core.Invalid("MapResources of no resources")
	}
	cs := (*core.Stream)(s)
	m := &Mapping{dev: cs.Device(), res: append([]*GraphicsResource(nil), res...)}
	seen := make(map[*GraphicsResource]bool, len(res))
	for i, r := range res {
		if r == nil || r.dev == nil {
			return nil, core.Invalid("MapResources of a nil graphics resource (argument %d)", i)
		}
		if seen[r] {
			return nil, core.Invalid("MapResources of %v twice", r)
		}
		seen[r] = true
		if r.dev != m.dev {
			return nil, core.WrongDevice(r.String(), r.dev, m.dev)
		}
		if r.kind == kindEGLFrame || r.kind == kindEGLImage {
			return nil, core.Invalid("MapResources of %v: the runtime maps EGL images and frames when it registers or acquires them (EGLFrame reaches them at once)", r)
		}
		if r.gl != nil {
			if m.gl != nil && m.gl != r.gl {
				return nil, core.Invalid("MapResources of GL resources of two GL contexts: map each context's resources separately")
			}
			m.gl = r.gl
		}
	}
	// Made like an object: a caller that leaves as the map runs leaves nothing mapped.
	return core.Make(ctx, m.dev, func(rt backend.Device, _ *core.Tracker) (*Mapping, error) {
		if err := cs.Alive(); err != nil {
			return nil, err
		}
		h := cs.RawHandle()
		hs := make([]backend.GraphicsResource, len(m.res))
		for i, r := range m.res {
			if err := r.check("MapResources"); err != nil {
				return nil, err
			}
			if r.mapped != nil {
				return nil, fmt.Errorf("%w: MapResources of %v, mapped already: Unmap its mapping first", ErrAlreadyMapped, r)
			}
			hs[i] = r.h
		}
		if m.gl != nil {
			if err := m.gl.check("MapResources"); err != nil {
				return nil, err
			}
			if err := m.gl.makeCurrent(); err != nil {
				return nil, err
			}
		}
		if err := rt.GraphicsMapResources(hs, h); err != nil {
			return nil, graphicsError("MapResources", err)
		}
		for _, r := range m.res {
			r.mapped = m
		}
		m.h = h
		return m, nil
	}, func(rt backend.Device, _ *core.Tracker, m *Mapping) { _ = m.unmap(rt, m.h) })
}

// Resources is the mapped resources, in MapResources's order.
func (m *Mapping) Resources() []*GraphicsResource {
	if m == nil {
		return nil
	}
	return append([]*GraphicsResource(nil), m.res...)
}

// Unmap unmaps the resources (cudaGraphicsUnmapResources) in stream order on s, a stream of
// their device: the graphics API sees what work queued on s before the unmap wrote. Work on
// other streams that uses the resources must be ordered before it (an event s waits for). From
// the call on, the buffers and arrays the resources lent refuse later use with ErrClosed. The
// future completes when the GPU has passed the unmap. Unmapping twice is an ErrNotMapped
// error; a stream of another device ErrWrongDevice.
func (m *Mapping) Unmap(ctx context.Context, s *streams.Stream) *streams.Future {
	if m == nil || m.dev == nil {
		return actor.Completed(struct{}{}, core.Invalid("Unmap of a nil mapping"))
	}
	if s == nil {
		return actor.Completed(struct{}{}, core.Invalid("Unmap on a nil stream"))
	}
	cs := (*core.Stream)(s)
	if cs.Device() != m.dev {
		return actor.Completed(struct{}{}, core.WrongDevice("stream", cs.Device(), m.dev))
	}
	return core.Queue(ctx, cs, func(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
		return m.unmap(rt, h)
	})
}

// unmapNow unmaps on the device's own stream: when a resource is unregistered while mapped
// (its GL detached, its device closing). Actor thread only.
func (m *Mapping) unmapNow(rt backend.Device) error {
	return m.unmap(rt, 0)
}

// unmap revokes the lent views and unmaps on h (0: the legacy stream, after everything).
// Actor thread only.
func (m *Mapping) unmap(rt backend.Device, h backend.Stream) error {
	if m.unmapped {
		return fmt.Errorf("%w: Unmap of a mapping unmapped already", ErrNotMapped)
	}
	m.unmapped = true
	hs := make([]backend.GraphicsResource, 0, len(m.res))
	for _, r := range m.res {
		r.lent.revoke(m.dev)
		r.mapped = nil
		hs = append(hs, r.h)
	}
	if m.gl != nil {
		if err := m.gl.makeCurrent(); err != nil {
			return err
		}
	}
	return graphicsError("Unmap", rt.GraphicsUnmapResources(hs, h))
}

// mappedCheck refuses a nil, closed or unmapped resource (EGL images and acquired EGL stream
// frames need no map); actor thread only.
func (r *GraphicsResource) mappedCheck(what string) error {
	if err := r.check(what); err != nil {
		return err
	}
	if r.mapped == nil && r.kind != kindEGLFrame && r.kind != kindEGLImage {
		return fmt.Errorf("%w: %s of %v, which is not mapped: MapResources first", ErrNotMapped, what, r)
	}
	return nil
}

// Buffer is the mapped GL buffer's memory as a device.Buffer of the resource's device
// (cudaGraphicsResourceGetMappedPointer), for copies, memsets and kernels; the same buffer
// each time until Unmap, after which it refuses use with ErrClosed. Its Close only ends this
// view early: the memory is the GL buffer's. A resource that is not mapped is an ErrNotMapped
// error; an image (use Array), ErrInvalidArgument.
func (r *GraphicsResource) Buffer(ctx context.Context) (*device.Buffer, error) {
	if err := r.check("Buffer"); err != nil {
		return nil, err
	}
	if r.kind != kindGLBuffer {
		return nil, core.Invalid("Buffer of %v: an image is mapped as arrays (Array, or EGLFrame for EGL)", r)
	}
	return core.Run(ctx, r.dev, func(rt backend.Device, _ *core.Tracker) (*device.Buffer, error) {
		if err := r.mappedCheck("Buffer"); err != nil {
			return nil, err
		}
		if b := r.lent.buf; b != nil {
			return b, nil
		}
		if err := r.current(); err != nil {
			return nil, err
		}
		p, size, err := rt.GraphicsResourceMappedPointer(r.h)
		if err != nil {
			return nil, graphicsError("Buffer of "+r.String(), err)
		}
		if err := r.dev.Charge(core.KindImported, size); err != nil { // not limited: never refused
			return nil, err
		}
		b := new(device.Buffer)
		r.dev.Adopt((*core.Buffer)(b), p, size, core.KindImported, func(backend.Device, cuda.DevicePtr, backend.Stream) error {
			return nil // the GL buffer's memory: the unmap gives it back
		})
		r.lent.buf = b
		return b, nil
	}).Await(ctx)
}

// Array is array index (a layer or a cube face; 0 for a plain 2D image) at mip level level of
// the mapped image as an alloc.Array of the resource's device
// (cudaGraphicsSubResourceGetMappedArray), for array copies, textures and surfaces; the same
// array each time until Unmap, after which it refuses use with ErrClosed. Its Close is
// refused: the storage is the image's. A resource that is not mapped is an ErrNotMapped error;
// a buffer (use Buffer), ErrInvalidArgument; an index or level the image lacks, the runtime's
// cudaerr.InvalidValue.
func (r *GraphicsResource) Array(ctx context.Context, index, level int) (*alloc.Array, error) {
	if err := r.check("Array"); err != nil {
		return nil, err
	}
	if r.kind == kindGLBuffer {
		return nil, core.Invalid("Array of %v: a buffer is mapped as memory (Buffer)", r)
	}
	if index < 0 || level < 0 {
		return nil, core.Invalid("Array of %v at index %d, level %d: both must be non-negative", r, index, level)
	}
	return core.Run(ctx, r.dev, func(rt backend.Device, _ *core.Tracker) (*alloc.Array, error) {
		if err := r.mappedCheck("Array"); err != nil {
			return nil, err
		}
		key := [2]uint32{uint32(index), uint32(level)}
		if a := r.lent.arrays[key]; a != nil {
			return (*alloc.Array)(a), nil
		}
		if err := r.current(); err != nil {
			return nil, err
		}
		h, err := rt.GraphicsSubResourceMappedArray(r.h, key[0], key[1])
		if err != nil {
			return nil, graphicsError(fmt.Sprintf("Array %d at level %d of %v", index, level, r), err)
		}
		return r.lendArray(rt, h, key)
	}).Await(ctx)
}

// MipmappedArray is the mapped image as an alloc.MipmappedArray of levels levels (the levels
// the GL texture has: the runtime cannot say) (cudaGraphicsResourceGetMappedMipmappedArray);
// the same one each time until Unmap, after which it and its levels refuse use with
// ErrClosed. Its Close is refused. Errors as Array's; levels below 1 is ErrInvalidArgument.
func (r *GraphicsResource) MipmappedArray(ctx context.Context, levels int) (*alloc.MipmappedArray, error) {
	if err := r.check("MipmappedArray"); err != nil {
		return nil, err
	}
	if r.kind == kindGLBuffer {
		return nil, core.Invalid("MipmappedArray of %v: a buffer is mapped as memory (Buffer)", r)
	}
	if levels < 1 {
		return nil, core.Invalid("MipmappedArray of %v with %d levels: at least 1", r, levels)
	}
	return core.Run(ctx, r.dev, func(rt backend.Device, _ *core.Tracker) (*alloc.MipmappedArray, error) {
		if err := r.mappedCheck("MipmappedArray"); err != nil {
			return nil, err
		}
		if m := r.lent.mip; m != nil {
			return (*alloc.MipmappedArray)(m), nil
		}
		if err := r.current(); err != nil {
			return nil, err
		}
		h, err := rt.GraphicsResourceMappedMipmappedArray(r.h)
		if err != nil {
			return nil, graphicsError("MipmappedArray of "+r.String(), err)
		}
		l0, err := rt.MipmappedArrayLevel(h, 0)
		if err != nil {
			return nil, graphicsError("MipmappedArray of "+r.String(), err)
		}
		info, err := rt.ArrayInfo(l0)
		if err != nil {
			return nil, graphicsError("MipmappedArray of "+r.String(), err)
		}
		m := r.dev.LendMipmappedArray(h, info, levels, "a mapped graphics resource")
		r.lent.mip = m
		return (*alloc.MipmappedArray)(m), nil
	}).Await(ctx)
}
