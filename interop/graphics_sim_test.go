package interop_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// noGL is a GL context for the simulator, which never calls GL: making it current is all
// AttachGL needs of it.
type noGL struct{}

func (noGL) MakeCurrent() error    { return nil }
func (noGL) ReleaseCurrent() error { return nil }

// The simulator has no OpenGL or EGL: every graphics call fails with ErrGraphicsNotSupported
// (and cudaerr.NotSupported), and the device stays usable.
func TestGraphicsNotSupportedOnTheSimulator(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev := testdev.Open(t, ctx, []device.Option{device.WithSimulator(sim.New())})
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close(ctx)) }()

	notSupported := func(err error) {
		t.Helper()
		require.ErrorIs(t, err, interop.ErrGraphicsNotSupported)
		require.ErrorIs(t, err, cudaerr.NotSupported)
	}
	gl, err := interop.AttachGL(ctx, dev, noGL{})
	require.NoError(t, err)
	_, err = interop.RegisterGLBuffer(ctx, gl, 1)
	notSupported(err)
	_, err = interop.RegisterGLImage(ctx, gl, 1, interop.GLTexture2D)
	notSupported(err)
	_, err = gl.GLDevices(ctx)
	notSupported(err)
	require.NoError(t, gl.Detach(ctx))

	_, err = interop.RegisterEGLImage(ctx, dev, 0x1000)
	notSupported(err)
	_, err = interop.EventFromEGLSync(ctx, dev, 0x1000)
	notSupported(err)
	_, err = interop.ConnectEGLStreamConsumer(ctx, dev, 0x1000)
	notSupported(err)
	_, err = interop.ConnectEGLStreamConsumer(ctx, dev, 0x1000, interop.ConsumerVidmem)
	notSupported(err)
	_, err = interop.ConnectEGLStreamProducer(ctx, dev, 0x1000, 64, 64)
	notSupported(err)
	testdev.RequireUsable(t, dev)
}

// Bad EGL input is refused before the runtime sees it.
func TestEGLBadInput(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev := testdev.Open(t, ctx, []device.Option{device.WithSimulator(sim.New())})
	invalid := func(err error) {
		t.Helper()
		require.ErrorIs(t, err, core.ErrInvalidArgument)
	}
	_, err := interop.RegisterEGLImage(ctx, dev, 0)
	invalid(err)
	_, err = interop.RegisterEGLImage(ctx, nil, 1)
	invalid(err)
	_, err = interop.EventFromEGLSync(ctx, dev, 0)
	invalid(err)
	_, err = interop.ConnectEGLStreamConsumer(ctx, dev, 0)
	invalid(err)
	_, err = interop.ConnectEGLStreamConsumer(ctx, dev, 1, interop.ConsumerSysmem, interop.ConsumerVidmem)
	invalid(err)
	_, err = interop.ConnectEGLStreamConsumer(ctx, dev, 1, interop.ConsumerLocation(5))
	invalid(err)
	_, err = interop.ConnectEGLStreamProducer(ctx, dev, 1, 0, 64)
	invalid(err)
	_, err = interop.ConnectEGLStreamProducer(ctx, dev, 0, 64, 64)
	invalid(err)
	var c *interop.EGLStreamConsumer
	_, err = c.Acquire(ctx, nil, time.Second)
	invalid(err)
	var m *interop.Mapping
	invalid(m.Unmap(ctx, nil).Wait(ctx))
	var r *interop.GraphicsResource
	invalid(r.Close(ctx))
	_, err = r.Buffer(ctx)
	invalid(err)
	testdev.RequireUsable(t, dev)
}
