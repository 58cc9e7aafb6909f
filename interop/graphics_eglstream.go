package interop

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// EGL streams (EGL_KHR_stream): a producer hands frames to a consumer through an
// EGLStreamKHR of the caller's display. CUDA can be either end: a consumer acquires the frames
// another producer (GL, a camera, another CUDA context) presents, a producer presents frames of
// its own arrays or memory. The caller creates and destroys the EGLStreamKHR.

// ErrNoFrame is wrapped by the error of an Acquire that no frame came to within its timeout,
// and of a Return with no frame released. The runtime reports both as
// cudaErrorLaunchTimeout, the code of a hung kernel that poisons a context; here it is no
// fault, so the error does not carry that code and the device stays usable.
var ErrNoFrame = errors.New("gpuactor/interop: no EGL stream frame")

// frameError is graphicsError for Acquire and Return, the timeout made ErrNoFrame.
func frameError(call string, err error) error {
	if errors.Is(err, cudaerr.LaunchTimeout) {
		return fmt.Errorf("%w: %s: %v", ErrNoFrame, call, err) // %v: not the poisoning code
	}
	return graphicsError(call, err)
}

// EGLStreamConsumer is CUDA connected as the consumer of an EGL stream. Its methods are safe
// for concurrent use.
type EGLStreamConsumer struct {
	dev    *core.Device
	c      backend.EGLStreamConnection
	closed atomic.Bool
}

// ConsumerLocation is where a consumer wants its frames (cudaEglResourceLocationFlags).
type ConsumerLocation uint32

// The consumer locations.
const (
	ConsumerSysmem = ConsumerLocation(backend.EGLResourceSysmem) // system memory
	ConsumerVidmem = ConsumerLocation(backend.EGLResourceVidmem) // the device's memory
)

// ConnectEGLStreamConsumer connects dev as the consumer of EGLStreamKHR stream
// (cudaEGLStreamConsumerConnect, or cudaEGLStreamConsumerConnectWithFlags with a location)
// and returns once it is connected. Stream 0 or more than one location is an
// ErrInvalidArgument error. Disconnect with Close, or let dev's Close do it.
func ConnectEGLStreamConsumer(ctx context.Context, dev *device.Device, stream uintptr, where ...ConsumerLocation) (*EGLStreamConsumer, error) {
	if dev == nil {
		return nil, core.Invalid("ConnectEGLStreamConsumer on a nil device")
	}
	if stream == 0 {
		return nil, core.Invalid("ConnectEGLStreamConsumer of EGL_NO_STREAM_KHR (0)")
	}
	if len(where) > 1 {
		return nil, core.Invalid("ConnectEGLStreamConsumer with %d locations: at most one", len(where))
	}
	flags := ^uint32(0) // cudaEGLStreamConsumerConnect, without a location
	if len(where) == 1 {
		if where[0] != ConsumerSysmem && where[0] != ConsumerVidmem {
			return nil, core.Invalid("ConnectEGLStreamConsumer with unknown location %d", where[0])
		}
		flags = uint32(where[0])
	}
	cd := (*core.Device)(dev)
	return core.Make(ctx, cd, func(rt backend.Device, tr *core.Tracker) (*EGLStreamConsumer, error) {
		h, err := rt.EGLStreamConsumerConnect(stream, flags)
		if err != nil {
			return nil, graphicsError("ConnectEGLStreamConsumer", err)
		}
		c := &EGLStreamConsumer{dev: cd, c: h}
		tr.Own(c, func() error { return c.disconnect(rt) })
		return c, nil
	}, func(rt backend.Device, tr *core.Tracker, c *EGLStreamConsumer) {
		tr.Disown(c)
		_ = c.disconnect(rt)
	})
}

func (c *EGLStreamConsumer) disconnect(rt backend.Device) error {
	if c.closed.Swap(true) {
		return nil
	}
	return graphicsError("disconnecting an EGL stream consumer", rt.EGLStreamConsumerDisconnect(c.c))
}

// streamOf checks s against dev and returns its core stream.
func streamOf(what string, s *streams.Stream, dev *core.Device) (*core.Stream, error) {
	if s == nil {
		return nil, core.Invalid("%s on a nil stream", what)
	}
	cs := (*core.Stream)(s)
	if cs.Device() != dev {
		return nil, core.WrongDevice("stream", cs.Device(), dev)
	}
	return cs, nil
}

// EGLStreamFrame is a frame a consumer acquired: its planes (Frame) are usable by work
// ordered after the acquire until Release gives the frame back.
type EGLStreamFrame struct {
	c   *EGLStreamConsumer
	res *GraphicsResource
	// Frame is the frame's planes, lent until Release.
	Frame EGLFrame
	done  atomic.Bool
}

// Acquire acquires the stream's next frame, ordered on s, waiting at most timeout for the
// producer to present one (cudaEGLStreamConsumerAcquireFrame; the runtime counts in
// microseconds), and returns once it is acquired with its planes. No frame in time is an
// ErrNoFrame error, after which the device stays usable; a closed consumer ErrClosed.
func (c *EGLStreamConsumer) Acquire(ctx context.Context, s *streams.Stream, timeout time.Duration) (*EGLStreamFrame, error) {
	if c == nil || c.dev == nil {
		return nil, core.Invalid("Acquire of a nil EGL stream consumer")
	}
	cs, err := streamOf("Acquire", s, c.dev)
	if err != nil {
		return nil, err
	}
	us := uint32(min(max(timeout.Microseconds(), 0), int64(^uint32(0))))
	return core.RunOn(ctx, cs, func(rt backend.Device, _ *core.Tracker, h backend.Stream) (*EGLStreamFrame, error) {
		if c.closed.Load() {
			return nil, core.Closed("Acquire of an EGL stream consumer after its Close")
		}
		rh, err := rt.EGLStreamConsumerAcquireFrame(c.c, h, us)
		if err != nil {
			return nil, frameError("Acquire", err)
		}
		r := &GraphicsResource{dev: c.dev, h: rh, kind: kindEGLFrame}
		f, err := rt.GraphicsResourceMappedEGLFrame(rh, 0, 0)
		if err == nil {
			var pub EGLFrame
			pub, err = r.lendFrame(rt, f, 0, 0)
			if err == nil {
				return &EGLStreamFrame{c: c, res: r, Frame: pub}, nil
			}
		}
		r.lent.revoke(c.dev)
		_ = rt.EGLStreamConsumerReleaseFrame(c.c, rh, h)
		return nil, graphicsError("Acquire: the frame's planes", err)
	}).Await(ctx)
}

// Release gives the frame back to the stream, ordered on s after the work queued on it
// (cudaEGLStreamConsumerReleaseFrame), and returns once the release is queued; from then on
// the frame's planes refuse use with ErrClosed. Releasing twice is an ErrClosed error.
func (f *EGLStreamFrame) Release(ctx context.Context, s *streams.Stream) error {
	if f == nil || f.c == nil {
		return core.Invalid("Release of a nil EGL stream frame")
	}
	cs, err := streamOf("Release", s, f.c.dev)
	if err != nil {
		return err
	}
	_, err = core.RunOn(ctx, cs, func(rt backend.Device, _ *core.Tracker, h backend.Stream) (struct{}, error) {
		if f.done.Swap(true) {
			return struct{}{}, core.Closed("EGL stream frame released twice")
		}
		f.res.lent.revoke(f.c.dev)
		f.res.closed.Store(true)
		if f.c.closed.Load() {
			return struct{}{}, core.Closed("Release of a frame of an EGL stream consumer after its Close")
		}
		return struct{}{}, graphicsError("Release", rt.EGLStreamConsumerReleaseFrame(f.c.c, f.res.h, h))
	}).Await(ctx)
	return err
}

// Close disconnects the consumer (cudaEGLStreamConsumerDisconnect) and returns once it is
// disconnected. Closing twice is an ErrClosed error.
func (c *EGLStreamConsumer) Close(ctx context.Context) error {
	if c == nil || c.dev == nil {
		return core.Invalid("Close of a nil EGL stream consumer")
	}
	return core.Do(ctx, c.dev, func(rt backend.Device, tr *core.Tracker) error {
		if c.closed.Load() {
			return core.Closed("EGL stream consumer closed twice")
		}
		tr.Disown(c)
		return c.disconnect(rt)
	})
}

// EGLStreamProducer is CUDA connected as the producer of an EGL stream. Its methods are safe
// for concurrent use.
type EGLStreamProducer struct {
	dev    *core.Device
	c      backend.EGLStreamConnection
	closed atomic.Bool
	// On the actor thread only: the frames presented and not yet returned, by their first
	// plane's storage.
	presented map[uintptr]EGLFrame
}

// ConnectEGLStreamProducer connects dev as the producer of EGLStreamKHR stream, of frames
// width×height (cudaEGLStreamProducerConnect), and returns once it is connected. Stream 0 or
// a size not positive is an ErrInvalidArgument error. Disconnect with Close, or let dev's
// Close do it.
func ConnectEGLStreamProducer(ctx context.Context, dev *device.Device, stream uintptr, width, height int) (*EGLStreamProducer, error) {
	if dev == nil {
		return nil, core.Invalid("ConnectEGLStreamProducer on a nil device")
	}
	if stream == 0 {
		return nil, core.Invalid("ConnectEGLStreamProducer of EGL_NO_STREAM_KHR (0)")
	}
	if width <= 0 || height <= 0 || width > 1<<30 || height > 1<<30 {
		return nil, core.Invalid("ConnectEGLStreamProducer of %d×%d frames: both must be positive", width, height)
	}
	cd := (*core.Device)(dev)
	return core.Make(ctx, cd, func(rt backend.Device, tr *core.Tracker) (*EGLStreamProducer, error) {
		h, err := rt.EGLStreamProducerConnect(stream, int32(width), int32(height))
		if err != nil {
			return nil, graphicsError("ConnectEGLStreamProducer", err)
		}
		p := &EGLStreamProducer{dev: cd, c: h, presented: map[uintptr]EGLFrame{}}
		tr.Own(p, func() error { return p.disconnect(rt) })
		return p, nil
	}, func(rt backend.Device, tr *core.Tracker, p *EGLStreamProducer) {
		tr.Disown(p)
		_ = p.disconnect(rt)
	})
}

func (p *EGLStreamProducer) disconnect(rt backend.Device) error {
	if p.closed.Swap(true) {
		return nil
	}
	return graphicsError("disconnecting an EGL stream producer", rt.EGLStreamProducerDisconnect(p.c))
}

// frameKey is the storage of f's first plane, which names the frame when it comes back.
func frameKey(f backend.EGLFrame) uintptr {
	if f.Type == backend.EGLFrameArray {
		return uintptr(f.Arrays[0])
	}
	return uintptr(f.Pitched[0].Ptr)
}

// backendFrame converts f, checking its planes against dev. Actor thread only.
func backendFrame(f EGLFrame, dev *core.Device) (backend.EGLFrame, error) {
	if len(f.Planes) == 0 || len(f.Planes) > backend.EGLMaxPlanes {
		return backend.EGLFrame{}, core.Invalid("Present of a frame of %d planes: 1 to %d", len(f.Planes), backend.EGLMaxPlanes)
	}
	if f.Type != EGLFrameArray && f.Type != EGLFramePitch {
		return backend.EGLFrame{}, core.Invalid("Present of a frame of unknown type %d", f.Type)
	}
	out := backend.EGLFrame{PlaneCount: uint32(len(f.Planes)), Type: uint32(f.Type), ColorFormat: uint32(f.ColorFormat)}
	for i, p := range f.Planes {
		if p.Width <= 0 || p.Height < 0 || p.Depth < 0 || p.Pitch < 0 || p.Channels <= 0 {
			return backend.EGLFrame{}, core.Invalid("Present: plane %d of %d×%d×%d, pitch %d, %d channels", i, p.Width, p.Height, p.Depth, p.Pitch, p.Channels)
		}
		out.Planes[i] = backend.EGLPlane{Width: uint32(p.Width), Height: uint32(p.Height), Depth: uint32(p.Depth), Pitch: uint32(p.Pitch), Channels: uint32(p.Channels), Format: p.Format}
		if f.Type == EGLFrameArray {
			h, err := (*core.Array)(p.Array).Handle(fmt.Sprintf("plane %d's array", i), dev)
			if err != nil {
				return backend.EGLFrame{}, err
			}
			out.Arrays[i] = h
			continue
		}
		if p.Buffer == nil {
			return backend.EGLFrame{}, core.Invalid("Present: pitched plane %d has no buffer", i)
		}
		ptr, n, err := dev.Resolve(fmt.Sprintf("plane %d's buffer", i), (*core.Buffer)(p.Buffer))
		if err != nil {
			return backend.EGLFrame{}, err
		}
		if need := uint64(p.Pitch) * uint64(max(p.Height, 1)) * uint64(max(p.Depth, 1)); p.Pitch < p.Width || n < need {
			return backend.EGLFrame{}, core.OutOfRange("Present: pitched plane %d of %d rows of pitch %d needs %d bytes (pitch at least the width), its buffer has %d", i, max(p.Height, 1), p.Pitch, need, n)
		}
		out.Pitched[i] = backend.EGLPitched{Ptr: ptr, Pitch: uint64(p.Pitch), XSize: uint64(p.Width), YSize: uint64(p.Height)}
	}
	return out, nil
}

// Present presents f, a frame of the producer's device's arrays or buffers, to the consumer,
// ordered on s after the work queued on it (cudaEGLStreamProducerPresentFrame), and returns
// once it is presented. The frame's storage is the consumer's until Return gives it back:
// keep its arrays and buffers open and unwritten until then. A frame without planes, of
// another device's storage or of a closed array or buffer is refused before the runtime sees
// it.
func (p *EGLStreamProducer) Present(ctx context.Context, s *streams.Stream, f EGLFrame) error {
	if p == nil || p.dev == nil {
		return core.Invalid("Present of a nil EGL stream producer")
	}
	cs, err := streamOf("Present", s, p.dev)
	if err != nil {
		return err
	}
	_, err = core.RunOn(ctx, cs, func(rt backend.Device, _ *core.Tracker, h backend.Stream) (struct{}, error) {
		if p.closed.Load() {
			return struct{}{}, core.Closed("Present of an EGL stream producer after its Close")
		}
		bf, err := backendFrame(f, p.dev)
		if err != nil {
			return struct{}{}, err
		}
		if err := rt.EGLStreamProducerPresentFrame(p.c, bf, h); err != nil {
			return struct{}{}, graphicsError("Present", err)
		}
		p.presented[frameKey(bf)] = f
		return struct{}{}, nil
	}).Await(ctx)
	return err
}

// Return takes back a frame the consumer released, ordered on s
// (cudaEGLStreamProducerReturnFrame), and returns once it is back: the frame Present was
// given. No frame released yet is an ErrNoFrame error.
func (p *EGLStreamProducer) Return(ctx context.Context, s *streams.Stream) (EGLFrame, error) {
	if p == nil || p.dev == nil {
		return EGLFrame{}, core.Invalid("Return of a nil EGL stream producer")
	}
	cs, err := streamOf("Return", s, p.dev)
	if err != nil {
		return EGLFrame{}, err
	}
	return core.RunOn(ctx, cs, func(rt backend.Device, _ *core.Tracker, h backend.Stream) (EGLFrame, error) {
		if p.closed.Load() {
			return EGLFrame{}, core.Closed("Return of an EGL stream producer after its Close")
		}
		bf, err := rt.EGLStreamProducerReturnFrame(p.c, h)
		if err != nil {
			return EGLFrame{}, frameError("Return", err)
		}
		k := frameKey(bf)
		f, ok := p.presented[k]
		if !ok {
			return EGLFrame{}, fmt.Errorf("gpuactor/interop: Return: the runtime returned a frame (storage %#x) this producer never presented", k)
		}
		delete(p.presented, k)
		return f, nil
	}).Await(ctx)
}

// Close disconnects the producer (cudaEGLStreamProducerDisconnect) and returns once it is
// disconnected. Closing twice is an ErrClosed error.
func (p *EGLStreamProducer) Close(ctx context.Context) error {
	if p == nil || p.dev == nil {
		return core.Invalid("Close of a nil EGL stream producer")
	}
	return core.Do(ctx, p.dev, func(rt backend.Device, tr *core.Tracker) error {
		if p.closed.Load() {
			return core.Closed("EGL stream producer closed twice")
		}
		tr.Disown(p)
		return p.disconnect(rt)
	})
}
