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
// fault, so the error does not carry that code and the device stays usable. An Acquire the
// driver answers with cudaErrorUnknown (a stream no frame was presented to) wraps it too.
var ErrNoFrame = errors.New("gpuactor/interop: no EGL stream frame")

// frameError is graphicsError for Acquire and Return, the timeout made ErrNoFrame.
func frameError(call string, err error) error {
	if errors.Is(err, cudaerr.LaunchTimeout) {
		return fmt.Errorf("%w: %s: %v", ErrNoFrame, call, err) // %v: not the poisoning code
	}
	return graphicsError(call, err)
}

// acquireError is frameError for Acquire, where NVIDIA's desktop driver (H100, driver 580)
// answers an acquire on a stream no frame was ever presented to with cudaErrorUnknown rather
// than the documented timeout. That is no fault either: it is ErrNoFrame too, and keeps the
// code (not a sticky one) for callers that tell the two apart.
func acquireError(err error) error {
	if errors.Is(err, cudaerr.Unknown) {
		return fmt.Errorf("%w (the driver reports cudaErrorUnknown for a stream that has no frame to acquire): Acquire: %w", ErrNoFrame, err)
	}
	return frameError("Acquire", err)
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
	h     backend.Stream // the stream of the acquire
}

// Acquire acquires the stream's next frame, ordered on s, waiting at most timeout for the
// producer to present one (cudaEGLStreamConsumerAcquireFrame; the runtime counts in
// microseconds), and returns once it is acquired with its planes. The wait happens on the
// device's thread, whose other calls wait with it: keep the timeout short and poll. No frame in
// time is an ErrNoFrame error, after which the device stays usable; so is the
// cudaErrorUnknown NVIDIA's desktop driver returns for a stream no frame has been presented
// to (seen on an H100, driver 580; the error still matches cudaerr.Unknown). To wait without holding the
// device's thread, poll the stream's EGL_STREAM_STATE_KHR for
// EGL_STREAM_STATE_NEW_FRAME_AVAILABLE_KHR first, as NVIDIA's samples do. A closed consumer
// is an ErrClosed error.
func (c *EGLStreamConsumer) Acquire(ctx context.Context, s *streams.Stream, timeout time.Duration) (*EGLStreamFrame, error) {
	if c == nil || c.dev == nil {
		return nil, core.Invalid("Acquire of a nil EGL stream consumer")
	}
	cs, err := streamOf("Acquire", s, c.dev)
	if err != nil {
		return nil, err
	}
	us := uint32(min(max(timeout.Microseconds(), 0), int64(^uint32(0))))
	// Made like an object: a caller that leaves as the acquire runs leaves no frame acquired.
	return core.Make(ctx, c.dev, func(rt backend.Device, _ *core.Tracker) (*EGLStreamFrame, error) {
		if err := cs.Alive(); err != nil {
			return nil, err
		}
		h := cs.RawHandle()
		if c.closed.Load() {
			return nil, core.Closed("Acquire of an EGL stream consumer after its Close")
		}
		rh, err := rt.EGLStreamConsumerAcquireFrame(c.c, h, us)
		if err != nil {
			return nil, acquireError(err)
		}
		r := &GraphicsResource{dev: c.dev, h: rh, kind: kindEGLFrame}
		f, err := rt.GraphicsResourceMappedEGLFrame(rh, 0, 0)
		if err == nil {
			var pub EGLFrame
			pub, err = r.lendFrame(rt, f, 0, 0)
			if err == nil {
				return &EGLStreamFrame{c: c, res: r, Frame: pub, h: h}, nil
			}
		}
		r.lent.revoke(c.dev)
		_ = rt.EGLStreamConsumerReleaseFrame(c.c, rh, h)
		return nil, graphicsError("Acquire: the frame's planes", err)
	}, func(rt backend.Device, _ *core.Tracker, f *EGLStreamFrame) {
		f.done.Store(true)
		f.res.lent.revoke(c.dev)
		f.res.closed.Store(true)
		_ = rt.EGLStreamConsumerReleaseFrame(c.c, f.res.h, f.h)
	})
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
