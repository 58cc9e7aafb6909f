package interop

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

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
