package interop_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/egl"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/sim"
)

// A real GL context (Mesa's software EGL device, where there is one) attached to a simulated
// device: GL code run through Run, call after call, runs on the device's thread with the
// context current there, so GL objects made by one call are there for the next. The
// simulator then refuses the registration, and the context detaches cleanly.
func TestGLRunWithARealContext(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev := testdev.Open(t, ctx, []device.Option{device.WithSimulator(sim.New())})
	c, err := egl.Open(egl.AnyDevice())
	var ue *egl.UnavailableError
	if errors.As(err, &ue) {
		t.Skipf("no headless EGL here: %v", err)
	}
	require.NoError(t, err)
	defer c.Close()
	gl, err := interop.AttachGL(ctx, dev, c)
	require.NoError(t, err)

	in := []byte("written by one Run, read by the next")
	var buf uint32
	require.NoError(t, gl.Run(ctx, func() error {
		g, err := c.GL()
		if err != nil {
			return err
		}
		buf, err = g.NewBuffer(in)
		return err
	}))
	out := make([]byte, len(in))
	require.NoError(t, gl.Run(ctx, func() error {
		g, err := c.GL()
		if err != nil {
			return err
		}
		return g.GetBufferSubData(buf, 0, out)
	}))
	assert.Equal(t, in, out)

	_, err = interop.RegisterGLBuffer(ctx, gl, buf)
	require.ErrorIs(t, err, interop.ErrGraphicsNotSupported)
	require.NoError(t, gl.Run(ctx, func() error {
		g, err := c.GL()
		if err != nil {
			return err
		}
		return g.DeleteBuffer(buf)
	}))
	require.NoError(t, gl.Detach(ctx))
	testdev.RequireUsable(t, dev)
}
