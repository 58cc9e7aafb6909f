package interop

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// EGL interoperability: EGL images (cudaGraphicsEGLRegisterImage), EGL frames, and events of
// EGL syncs (cudaEventCreateFromEGLSync). EGL handles (EGLImageKHR, EGLSyncKHR, EGLStreamKHR)
// are pointers of the caller's EGL display, passed as uintptr; they need no GL context
// current.

// RegisterEGLImage registers EGLImageKHR image (made with eglCreateImageKHR, from a GL
// texture say) with dev (cudaGraphicsEGLRegisterImage) and returns once it is registered.
// It needs no map: its EGLFrame (or Array) reaches it at once, until Close. The runtime does
// not order the image's users: finish the other API's work first (glFinish, or a stream
// waiting for EventFromEGLSync), and CUDA's before the other API uses it again. Image 0 or an unknown
// flag is an ErrInvalidArgument error; the simulator's refusal ErrGraphicsNotSupported. Close
// unregisters it, as does dev's Close.
func RegisterEGLImage(ctx context.Context, dev *device.Device, image uintptr, flags ...RegisterFlag) (*GraphicsResource, error) {
	if dev == nil {
		return nil, core.Invalid("RegisterEGLImage on a nil device")
	}
	if image == 0 {
		return nil, core.Invalid("RegisterEGLImage of EGL_NO_IMAGE_KHR (0)")
	}
	f, err := registerFlags("RegisterEGLImage", flags)
	if err != nil {
		return nil, err
	}
	cd := (*core.Device)(dev)
	return core.Make(ctx, cd, func(rt backend.Device, tr *core.Tracker) (*GraphicsResource, error) {
		h, err := rt.GraphicsEGLRegisterImage(image, f)
		if err != nil {
			return nil, graphicsError("RegisterEGLImage", err)
		}
		r := &GraphicsResource{dev: cd, h: h, kind: kindEGLImage, flags: f}
		tr.Own(r, func() error { return r.unregister(rt) })
		return r, nil
	}, func(rt backend.Device, tr *core.Tracker, r *GraphicsResource) {
		tr.Disown(r)
		_ = r.unregister(rt)
	})
}

// EGLFrameType is how an EGL frame's planes are laid out.
type EGLFrameType uint32

// The EGL frame types (cudaEglFrameType).
const (
	EGLFrameArray = EGLFrameType(backend.EGLFrameArray) // each plane a CUDA array
	EGLFramePitch = EGLFrameType(backend.EGLFramePitch) // each plane pitched device memory
)

// EGLColorFormat is a cudaEglColorFormat value; gpuactor passes it through, so the YUV and
// Bayer formats the constants below leave out are values of the runtime's enum too.
type EGLColorFormat uint32

// The single-plane color formats (cudaEglColorFormat*).
const (
	EGLColorARGB = EGLColorFormat(6) // cudaEglColorFormatARGB
	EGLColorRGBA = EGLColorFormat(7) // cudaEglColorFormatRGBA
	EGLColorL    = EGLColorFormat(8) // cudaEglColorFormatL
	EGLColorR    = EGLColorFormat(9) // cudaEglColorFormatR
)

// EGLPlane is one plane of an EGL frame: its shape, its format and its storage, Array for an
// EGLFrameArray frame and Buffer (Pitch bytes a row) for an EGLFramePitch one.
type EGLPlane struct {
	Width, Height, Depth int
	Pitch                int // bytes a row, pitched planes
	Channels             int
	Format               cuda.ChannelFormat
	Array                *alloc.Array
	Buffer               *device.Buffer
}

// EGLFrame is a cudaEglFrame: one to three planes of one color format.
type EGLFrame struct {
	Type        EGLFrameType
	ColorFormat EGLColorFormat
	Planes      []EGLPlane
}

// EGLFrame is array index at mip level level of an EGL image (or of a mapped GL resource) as
// an EGL frame (cudaGraphicsResourceGetMappedEglFrame). Its planes' arrays and buffers are
// lent like Array's and Buffer's: they refuse use with ErrClosed after Unmap (for an EGL
// image, after Close). A GL resource that is not mapped is an ErrNotMapped error.
func (r *GraphicsResource) EGLFrame(ctx context.Context, index, level int) (EGLFrame, error) {
	if err := r.check("EGLFrame"); err != nil {
		return EGLFrame{}, err
	}
	if index < 0 || level < 0 {
		return EGLFrame{}, core.Invalid("EGLFrame of %v at index %d, level %d: both must be non-negative", r, index, level)
	}
	return core.Run(ctx, r.dev, func(rt backend.Device, _ *core.Tracker) (EGLFrame, error) {
		if err := r.mappedCheck("EGLFrame"); err != nil {
			return EGLFrame{}, err
		}
		if err := r.current(); err != nil {
			return EGLFrame{}, err
		}
		f, err := rt.GraphicsResourceMappedEGLFrame(r.h, uint32(index), uint32(level))
		if err != nil {
			return EGLFrame{}, graphicsError("EGLFrame of "+r.String(), err)
		}
		return r.lendFrame(rt, f, uint32(index), uint32(level))
	}).Await(ctx)
}

// lendFrame makes the public frame of f, lending its planes' storage. Actor thread only.
func (r *GraphicsResource) lendFrame(rt backend.Device, f backend.EGLFrame, index, level uint32) (EGLFrame, error) {
	n := min(int(f.PlaneCount), backend.EGLMaxPlanes)
	out := EGLFrame{Type: EGLFrameType(f.Type), ColorFormat: EGLColorFormat(f.ColorFormat), Planes: make([]EGLPlane, n)}
	for i := range n {
		p := f.Planes[i]
		pl := EGLPlane{Width: int(p.Width), Height: int(p.Height), Depth: int(p.Depth), Pitch: int(p.Pitch), Channels: int(p.Channels), Format: p.Format}
		if f.Type == backend.EGLFrameArray {
			// Planes are keyed past the mip levels' keys: index | plane<<16.
			a, err := r.lendArray(rt, f.Arrays[i], [2]uint32{index | uint32(i+1)<<16, level})
			if err != nil {
				return EGLFrame{}, err
			}
			pl.Array = a
		} else {
			q := f.Pitched[i]
			size := q.Pitch * max(q.YSize, uint64(p.Height)) * uint64(max(p.Depth, 1))
			if q.Ptr == 0 || size == 0 {
				return EGLFrame{}, fmt.Errorf("gpuactor/interop: EGLFrame of %v: plane %d has no memory", r, i)
			}
			if err := r.dev.Charge(core.KindImported, size); err != nil {
				return EGLFrame{}, err
			}
			b := new(device.Buffer)
			r.dev.Adopt((*core.Buffer)(b), q.Ptr, size, core.KindImported, func(backend.Device, cuda.DevicePtr, backend.Stream) error { return nil })
			r.lent.planes = append(r.lent.planes, b)
			pl.Buffer = b
		}
		out.Planes[i] = pl
	}
	return out, nil
}

// EventFromEGLSync makes an event of dev over EGLSyncKHR sync (made with eglCreateSyncKHR on
// the caller's display; a fence sync after GL work, say) (cudaEventCreateFromEGLSync) and
// returns once it is made: a stream that Waits for the event waits until the sync is
// signalled, which orders CUDA work after the graphics API's without a CPU wait. The event
// cannot be recorded or timed (the runtime refuses both). Close destroys the event, not the
// sync. Sync 0 is an ErrInvalidArgument error.
func EventFromEGLSync(ctx context.Context, dev *device.Device, sync uintptr) (*streams.Event, error) {
	if dev == nil {
		return nil, core.Invalid("EventFromEGLSync on a nil device")
	}
	if sync == 0 {
		return nil, core.Invalid("EventFromEGLSync of EGL_NO_SYNC_KHR (0)")
	}
	e, err := core.OpenEvent(ctx, (*core.Device)(dev), backend.EventDisableTiming, func(rt backend.Device) (backend.Event, error) {
		e, err := rt.EventCreateFromEGLSync(sync, 0)
		return e, graphicsError("EventFromEGLSync", err)
	})
	if err != nil {
		return nil, err
	}
	return (*streams.Event)(e), nil
}
