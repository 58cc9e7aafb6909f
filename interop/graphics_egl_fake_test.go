//go:build linux

package interop_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/interop"
)

// The model's EGL side (graphics_fake_test.go has the GL side): an EGL image is a simulated
// array, readable at once (the runtime maps it when it registers it); an EGL stream is a FIFO
// from its producer connection to its consumer connection, frames going back once released;
// an EGL sync is an event that was never recorded, which a stream passes at once. As NVIDIA's
// desktop driver does, an acquire on a stream no frame was ever presented to fails with
// cudaErrorUnknown; one on a stream whose frames were all acquired times out.

type eglStreamModel struct {
	consumer, producer backend.EGLStreamConnection
	fifo               []backend.EGLFrame
	presented          int // frames ever presented
	acquired           map[backend.GraphicsResource]backend.EGLFrame
	released           []backend.EGLFrame
}

func (d *glDevice) GraphicsEGLRegisterImage(image uintptr, _ uint32) (backend.GraphicsResource, error) {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	a, err := d.Device.MallocArray(cuda.Channels[uint8](4), 4, 2, 0)
	if err != nil {
		return 0, err
	}
	d.st.next += 0x10
	h := backend.GraphicsResource(d.st.next)
	d.st.res[h] = &glRes{kind: "egl image", arr: a, mapped: true}
	return h, nil
}

func (d *glDevice) GraphicsResourceMappedEGLFrame(r backend.GraphicsResource, index, level uint32) (backend.EGLFrame, error) {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	for _, s := range d.st.streams {
		if f, ok := s.acquired[r]; ok {
			return f, nil
		}
	}
	x, err := d.mappedRes("cudaGraphicsResourceGetMappedEglFrame", r)
	if err != nil {
		return backend.EGLFrame{}, err
	}
	f := backend.EGLFrame{PlaneCount: 1, Type: backend.EGLFrameArray, ColorFormat: 7}
	f.Arrays[0] = x.arr
	f.Planes[0] = backend.EGLPlane{Width: 4, Height: 2, Channels: 4, Format: cuda.Channels[uint8](4)}
	return f, nil
}

func (d *glDevice) GraphicsUnmapResources(rs []backend.GraphicsResource, s backend.Stream) error {
	return d.mapAll("cudaGraphicsUnmapResources", rs, false)
}

func (d *glDevice) stream(h uintptr) *eglStreamModel {
	if d.st.streams == nil {
		d.st.streams = map[uintptr]*eglStreamModel{}
	}
	s := d.st.streams[h]
	if s == nil {
		s = &eglStreamModel{acquired: map[backend.GraphicsResource]backend.EGLFrame{}}
		d.st.streams[h] = s
	}
	return s
}

func (d *glDevice) EGLStreamConsumerConnect(stream uintptr, _ uint32) (backend.EGLStreamConnection, error) {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	d.st.next += 0x10
	c := backend.EGLStreamConnection(d.st.next)
	d.stream(stream).consumer = c
	return c, nil
}

func (d *glDevice) EGLStreamProducerConnect(stream uintptr, w, h int32) (backend.EGLStreamConnection, error) {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	s := d.stream(stream)
	if s.consumer == 0 {
		return 0, cudaerr.New("cudaEGLStreamProducerConnect", cudaerr.InvalidValue) // a consumer connects first
	}
	d.st.next += 0x10
	s.producer = backend.EGLStreamConnection(d.st.next)
	return s.producer, nil
}

func (d *glDevice) streamOf(c backend.EGLStreamConnection) *eglStreamModel {
	for _, s := range d.st.streams {
		if s.consumer == c || s.producer == c {
			return s
		}
	}
	return nil
}

func (d *glDevice) disconnect(op string, c backend.EGLStreamConnection) error {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	s := d.streamOf(c)
	if s == nil {
		d.st.fault("%s of unknown connection %#x", op, c)
		return cudaerr.New(op, cudaerr.InvalidResourceHandle)
	}
	if s.consumer == c {
		s.consumer = 0
	} else {
		s.producer = 0
	}
	return nil
}

func (d *glDevice) EGLStreamConsumerDisconnect(c backend.EGLStreamConnection) error {
	return d.disconnect("cudaEGLStreamConsumerDisconnect", c)
}

func (d *glDevice) EGLStreamProducerDisconnect(c backend.EGLStreamConnection) error {
	return d.disconnect("cudaEGLStreamProducerDisconnect", c)
}

func (d *glDevice) EGLStreamProducerPresentFrame(c backend.EGLStreamConnection, f backend.EGLFrame, _ backend.Stream) error {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	s := d.streamOf(c)
	if s == nil || s.producer != c {
		return cudaerr.New("cudaEGLStreamProducerPresentFrame", cudaerr.InvalidResourceHandle)
	}
	s.fifo = append(s.fifo, f)
	s.presented++
	return nil
}

func (d *glDevice) EGLStreamConsumerAcquireFrame(c backend.EGLStreamConnection, _ backend.Stream, _ uint32) (backend.GraphicsResource, error) {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	s := d.streamOf(c)
	if s == nil || s.consumer != c {
		return 0, cudaerr.New("cudaEGLStreamConsumerAcquireFrame", cudaerr.InvalidResourceHandle)
	}
	if s.presented == 0 {
		return 0, cudaerr.New("cudaEGLStreamConsumerAcquireFrame", cudaerr.Unknown)
	}
	if len(s.fifo) == 0 {
		return 0, cudaerr.New("cudaEGLStreamConsumerAcquireFrame", cudaerr.LaunchTimeout)
	}
	d.st.next += 0x10
	r := backend.GraphicsResource(d.st.next)
	s.acquired[r], s.fifo = s.fifo[0], s.fifo[1:]
	return r, nil
}

func (d *glDevice) EGLStreamConsumerReleaseFrame(c backend.EGLStreamConnection, r backend.GraphicsResource, _ backend.Stream) error {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	s := d.streamOf(c)
	f, ok := s.acquired[r]
	if !ok {
		d.st.fault("releasing frame %#x, not acquired", r)
		return cudaerr.New("cudaEGLStreamConsumerReleaseFrame", cudaerr.InvalidResourceHandle)
	}
	delete(s.acquired, r)
	s.released = append(s.released, f)
	return nil
}

func (d *glDevice) EGLStreamProducerReturnFrame(c backend.EGLStreamConnection, _ backend.Stream) (backend.EGLFrame, error) {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	s := d.streamOf(c)
	if s == nil || len(s.released) == 0 {
		return backend.EGLFrame{}, cudaerr.New("cudaEGLStreamProducerReturnFrame", cudaerr.LaunchTimeout)
	}
	f := s.released[0]
	s.released = s.released[1:]
	return f, nil
}

func (d *glDevice) EventCreateFromEGLSync(sync uintptr, flags uint32) (backend.Event, error) {
	return d.Device.EventCreate(flags)
}

// An EGL image needs no map: its frame's plane is an array at once, refused after Close.
func TestEGLImageOnTheModel(t *testing.T) {
	ctx := testdev.Ctx(t)
	f := newGLFixture(t)
	r, err := interop.RegisterEGLImage(ctx, f.dev, 0x5000)
	require.NoError(t, err)
	_, err = interop.MapResources(ctx, f.s, r)
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	fr, err := r.EGLFrame(ctx, 0, 0)
	require.NoError(t, err)
	require.Equal(t, interop.EGLFrameArray, fr.Type)
	require.Equal(t, interop.EGLColorRGBA, fr.ColorFormat)
	require.Len(t, fr.Planes, 1)
	a := fr.Planes[0].Array
	require.NotNil(t, a)
	pix := []uint8{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32}
	require.NoError(t, alloc.CopyToArray(ctx, f.s, a, a.Whole(), pix).Wait(ctx))
	fr2, err := r.EGLFrame(ctx, 0, 0)
	require.NoError(t, err)
	assert.Same(t, a, fr2.Planes[0].Array, "one lent array per plane")
	out := make([]uint8, len(pix))
	require.NoError(t, alloc.CopyFromArray(ctx, f.s, out, fr2.Planes[0].Array, a.Whole()).Wait(ctx))
	assert.Equal(t, pix, out)
	require.NoError(t, r.Close(ctx))
	require.ErrorIs(t, alloc.CopyFromArray(ctx, f.s, out, a, a.Whole()).Wait(ctx), core.ErrClosed)
	testdev.RequireUsable(t, f.dev)
}

// A frame goes from the producer to the consumer and back: the consumer's plane is the
// producer's array (by handle), Release revokes it, and Return gives the producer the frame
// it presented, its own *alloc.Array.
func TestEGLStreamOnTheModel(t *testing.T) {
	ctx := testdev.Ctx(t)
	f := newGLFixture(t)
	const stream = 0x9000
	_, err := interop.ConnectEGLStreamProducer(ctx, f.dev, stream, 4, 2)
	require.ErrorIs(t, err, cudaerr.InvalidValue, "the model wants the consumer first")
	cons, err := interop.ConnectEGLStreamConsumer(ctx, f.dev, stream, interop.ConsumerVidmem)
	require.NoError(t, err)
	prod, err := interop.ConnectEGLStreamProducer(ctx, f.dev, stream, 4, 2)
	require.NoError(t, err)

	_, err = cons.Acquire(ctx, f.s, time.Millisecond)
	require.ErrorIs(t, err, interop.ErrNoFrame, "nothing presented yet")
	require.ErrorIs(t, err, cudaerr.Unknown, "the driver's own code, kept")
	require.False(t, cudaerr.IsSticky(err), "an empty stream poisons nothing")
	require.NoError(t, f.dev.Err(), "the device is not failed")
	testdev.RequireUsable(t, f.dev)
	arr, err := alloc.NewArray(ctx, f.dev, cuda.Channels[uint8](4), alloc.Extent{W: 4, H: 2})
	require.NoError(t, err)
	pix := make([]uint8, 32)
	for i := range pix {
		pix[i] = uint8(200 - i)
	}
	require.NoError(t, alloc.CopyToArray(ctx, f.s, arr, arr.Whole(), pix).Wait(ctx))
	frame := interop.EGLFrame{Type: interop.EGLFrameArray, ColorFormat: interop.EGLColorRGBA,
		Planes: []interop.EGLPlane{{Width: 4, Height: 2, Channels: 4, Format: cuda.Channels[uint8](4), Array: arr}}}
	require.ErrorIs(t, prod.Present(ctx, f.s, interop.EGLFrame{Type: interop.EGLFrameArray}), core.ErrInvalidArgument, "no planes")
	require.NoError(t, prod.Present(ctx, f.s, frame))

	got, err := cons.Acquire(ctx, f.s, time.Second)
	require.NoError(t, err)
	require.Len(t, got.Frame.Planes, 1)
	pl := got.Frame.Planes[0]
	require.NotNil(t, pl.Array)
	out := make([]uint8, 32)
	require.NoError(t, alloc.CopyFromArray(ctx, f.s, out, pl.Array, pl.Array.Whole()).Wait(ctx))
	assert.Equal(t, pix, out, "the consumer reads the producer's pixels")
	require.ErrorIs(t, pl.Array.Close(ctx), core.ErrInvalidArgument, "a lent plane is not the consumer's to free")
	require.NoError(t, got.Release(ctx, f.s))
	require.ErrorIs(t, got.Release(ctx, f.s), core.ErrClosed)
	require.ErrorIs(t, alloc.CopyFromArray(ctx, f.s, out, pl.Array, pl.Array.Whole()).Wait(ctx), core.ErrClosed, "the plane after Release")

	back, err := prod.Return(ctx, f.s)
	require.NoError(t, err)
	require.Same(t, arr, back.Planes[0].Array)
	_, err = prod.Return(ctx, f.s)
	require.ErrorIs(t, err, interop.ErrNoFrame, "nothing released")
	_, err = cons.Acquire(ctx, f.s, time.Millisecond)
	require.ErrorIs(t, err, interop.ErrNoFrame, "every frame acquired: a timeout")
	require.NotErrorIs(t, err, cudaerr.LaunchTimeout, "the timeout does not carry the poisoning code")
	require.False(t, cudaerr.IsSticky(err))
	require.NoError(t, f.dev.Err())

	require.NoError(t, prod.Close(ctx))
	require.ErrorIs(t, prod.Close(ctx), core.ErrClosed)
	require.ErrorIs(t, prod.Present(ctx, f.s, frame), core.ErrClosed)
	require.NoError(t, arr.Close(ctx))
	// The consumer is left to the device's Close, which disconnects it.
	testdev.RequireUsable(t, f.dev)
}

// An EGL sync's event is a streams.Event a stream waits for; it cannot be recorded by
// gpuactor's timing (DisableTiming) and closes once.
func TestEventFromEGLSyncOnTheModel(t *testing.T) {
	ctx := testdev.Ctx(t)
	f := newGLFixture(t)
	ev, err := interop.EventFromEGLSync(ctx, f.dev, 0x4444)
	require.NoError(t, err)
	require.NoError(t, f.s.Wait(ctx, ev).Wait(ctx))
	require.NoError(t, ev.Close(ctx))
	require.ErrorIs(t, ev.Close(ctx), core.ErrClosed)
	testdev.RequireUsable(t, f.dev)
}
