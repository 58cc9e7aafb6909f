package egl_test

import (
	"encoding/binary"
	"errors"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/egl"
)

// open makes a context on any EGL device (Mesa's software one, on a machine without a GPU),
// skipping where there is none, current on the test's locked thread.
func open(t *testing.T) (*egl.Context, *egl.GL) {
	t.Helper()
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	c, err := egl.Open(egl.AnyDevice())
	var ue *egl.UnavailableError
	if errors.As(err, &ue) {
		t.Skipf("no headless EGL here: %v", err)
	}
	require.NoError(t, err)
	t.Cleanup(c.Close)
	require.NoError(t, c.MakeCurrent())
	g, err := c.GL()
	require.NoError(t, err)
	t.Logf("EGL %s from %s, GL %s", c.Vendor, c.Library, g.Version())
	return c, g
}

// The GL wrappers round-trip a buffer and two texture formats through the GL, every value
// checked: what the GPU tests rely on to read what CUDA wrote.
func TestGLRoundTrips(t *testing.T) {
	_, g := open(t)
	in := make([]byte, 1024)
	for i := range in {
		in[i] = byte(i*7 + 3)
	}
	b, err := g.NewBuffer(make([]byte, len(in)))
	require.NoError(t, err)
	require.NoError(t, g.BufferSubData(b, 0, in))
	out := make([]byte, len(in))
	require.NoError(t, g.GetBufferSubData(b, 0, out))
	assert.Equal(t, in, out)
	part := make([]byte, 16)
	require.NoError(t, g.GetBufferSubData(b, 100, part))
	assert.Equal(t, in[100:116], part)
	require.NoError(t, g.DeleteBuffer(b))

	const w, h = 8, 4
	rgba := make([]byte, 4*w*h)
	for i := range rgba {
		rgba[i] = byte(i*13 + 1)
	}
	tex, err := g.NewTexture2D(egl.RGBA8, w, h)
	require.NoError(t, err)
	require.NoError(t, g.TexSubImage2D(tex, w, h, egl.RGBA, egl.UnsignedByte, rgba))
	got := make([]byte, len(rgba))
	require.NoError(t, g.DrawAndRead(tex, egl.RGBA8, w, h, egl.RGBA, egl.UnsignedByte, got))
	assert.Equal(t, rgba, got)
	require.NoError(t, g.DeleteTexture(tex))

	fl := make([]byte, 4*w*h)
	for i := range w * h {
		binary.LittleEndian.PutUint32(fl[4*i:], math.Float32bits(float32(i)*1.5-3))
	}
	tex, err = g.NewTexture2D(egl.R32F, w, h)
	require.NoError(t, err)
	require.NoError(t, g.TexSubImage2D(tex, w, h, egl.Red, egl.Float, fl))
	got = make([]byte, len(fl))
	require.NoError(t, g.DrawAndRead(tex, egl.R32F, w, h, egl.Red, egl.Float, got))
	assert.Equal(t, fl, got)
	require.NoError(t, g.Finish())

	// A GL mistake is an error naming the call.
	require.ErrorContains(t, g.BufferSubData(12345, 0, in), "glBufferSubData")
}

// EGL images of textures and fence syncs, where the display has them.
func TestEGLImageAndSync(t *testing.T) {
	c, g := open(t)
	tex, err := g.NewTexture2D(egl.RGBA8, 4, 4)
	require.NoError(t, err)
	if c.HasExtension("EGL_KHR_gl_texture_2D_image") {
		img, err := c.ImageFromTexture(tex)
		require.NoError(t, err)
		assert.NotZero(t, img)
		require.NoError(t, c.DestroyImage(img))
	}
	if c.HasExtension("EGL_KHR_fence_sync") {
		s, err := c.FenceSync()
		require.NoError(t, err)
		require.NoError(t, c.DestroySync(s))
	}
	_, err = c.ImageFromTexture(0)
	require.Error(t, err)
}

// A new stream, where the display has streams, is in the CREATED state; the states have
// their EGL names.
func TestStreamState(t *testing.T) {
	assert.Equal(t, "NEW_FRAME_AVAILABLE", egl.StreamStateName(egl.StreamNewFrameAvailable))
	assert.Equal(t, "CONNECTING", egl.StreamStateName(egl.StreamConnecting))
	assert.Equal(t, "0x1234", egl.StreamStateName(0x1234))
	c, _ := open(t)
	if !c.HasExtension("EGL_KHR_stream") {
		t.Skipf("the %s display has no EGL_KHR_stream", c.Vendor)
	}
	s, err := c.NewStream()
	require.NoError(t, err)
	st, err := c.StreamState(s)
	require.NoError(t, err)
	assert.Equal(t, "CREATED", egl.StreamStateName(st))
	t.Logf("stream reuse off (EGL_NV_stream_reset): %v", c.NoReuse())
	require.NoError(t, c.DestroyStream(s))
}
