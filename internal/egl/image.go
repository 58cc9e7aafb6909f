package egl

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"
)

// EGL images, fence syncs and streams of a context's display (EGL_KHR_gl_texture_2D_image,
// EGL_KHR_fence_sync, EGL_KHR_stream).

const (
	eglGLTexture2DKHR    = 0x30B1
	eglGLTextureLevelKHR = 0x30BC
	eglImagePreserved    = 0x30D2 // EGL_IMAGE_PRESERVED_KHR
	eglTrue              = 1
	eglFalse             = 0
	eglSyncFenceKHR      = 0x30F9
	eglStreamStateKHR    = 0x3214
	eglSupportReuseNV    = 0x3335 // EGL_SUPPORT_REUSE_NV (EGL_NV_stream_reset)
)

// The EGL stream states (EGL_STREAM_STATE_KHR).
const (
	StreamCreated           = 0x3215 // EGL_STREAM_STATE_CREATED_KHR
	StreamConnecting        = 0x3216 // EGL_STREAM_STATE_CONNECTING_KHR
	StreamEmpty             = 0x3217 // EGL_STREAM_STATE_EMPTY_KHR
	StreamNewFrameAvailable = 0x3218 // EGL_STREAM_STATE_NEW_FRAME_AVAILABLE_KHR
	StreamOldFrameAvailable = 0x3219 // EGL_STREAM_STATE_OLD_FRAME_AVAILABLE_KHR
	StreamDisconnected      = 0x321A // EGL_STREAM_STATE_DISCONNECTED_KHR
)

// StreamStateName is the EGL name of stream state v, or its number when it has none.
func StreamStateName(v int32) string {
	switch v {
	case StreamCreated:
		return "CREATED"
	case StreamConnecting:
		return "CONNECTING"
	case StreamEmpty:
		return "EMPTY"
	case StreamNewFrameAvailable:
		return "NEW_FRAME_AVAILABLE"
	case StreamOldFrameAvailable:
		return "OLD_FRAME_AVAILABLE"
	case StreamDisconnected:
		return "DISCONNECTED"
	}
	return fmt.Sprintf("%#x", v)
}

// ext is extension entry point name, or an error naming what is missing.
func (c *Context) ext(extension, name string) (uintptr, error) {
	if !c.HasExtension(extension) {
		return 0, fmt.Errorf("gpuactor/egl: the display has no %s", extension)
	}
	a := c.l.proc(name)
	if a == 0 {
		return 0, fmt.Errorf("gpuactor/egl: eglGetProcAddress(%q) found nothing", name)
	}
	return a, nil
}

// ImageFromTexture makes an EGLImageKHR of level 0 of 2D texture tex of the context, which
// must be current on the calling thread. It asks EGL to keep the texture's contents
// (EGL_IMAGE_PRESERVED_KHR), as NVIDIA's EGL image samples do; even so, NVIDIA's desktop
// driver gives CUDA none of what was written before the image existed, and shares everything
// written after: fill the texture once the image is made (docs/design/graphics-interop.md).
func (c *Context) ImageFromTexture(tex uint32) (uintptr, error) {
	create, err := c.ext("EGL_KHR_gl_texture_2D_image", "eglCreateImageKHR")
	if err != nil {
		return 0, err
	}
	attrs := []int32{eglGLTextureLevelKHR, 0, eglImagePreserved, eglTrue, eglNone}
	img, _, _ := purego.SyscallN(create, c.Display, c.Context, eglGLTexture2DKHR, uintptr(tex), uintptr(unsafe.Pointer(&attrs[0])))
	runtime.KeepAlive(attrs)
	if img == 0 {
		return 0, c.l.eglError("eglCreateImageKHR(EGL_GL_TEXTURE_2D_KHR)")
	}
	return img, nil
}

// DestroyImage destroys an EGLImageKHR.
func (c *Context) DestroyImage(img uintptr) error {
	destroy, err := c.ext("EGL_KHR_image_base", "eglDestroyImageKHR")
	if err != nil {
		return err
	}
	if r, _, _ := purego.SyscallN(destroy, c.Display, img); uint32(r) == 0 {
		return c.l.eglError("eglDestroyImageKHR")
	}
	return nil
}

// FenceSync inserts a fence sync into the GL command stream of the context, current on the
// calling thread, and flushes it: the sync is signalled once the GL work before it is done.
func (c *Context) FenceSync() (uintptr, error) {
	create, err := c.ext("EGL_KHR_fence_sync", "eglCreateSyncKHR")
	if err != nil {
		return 0, err
	}
	s, _, _ := purego.SyscallN(create, c.Display, eglSyncFenceKHR, 0)
	if s == 0 {
		return 0, c.l.eglError("eglCreateSyncKHR(EGL_SYNC_FENCE_KHR)")
	}
	if g, err := c.GL(); err == nil {
		g.call("glFlush")
	}
	return s, nil
}

// DestroySync destroys an EGLSyncKHR.
func (c *Context) DestroySync(s uintptr) error {
	destroy, err := c.ext("EGL_KHR_fence_sync", "eglDestroySyncKHR")
	if err != nil {
		return err
	}
	if r, _, _ := purego.SyscallN(destroy, c.Display, s); uint32(r) == 0 {
		return c.l.eglError("eglDestroySyncKHR")
	}
	return nil
}

// NewStream makes an EGLStreamKHR of the display (EGL_KHR_stream). Where the display has
// EGL_NV_stream_reset (NoReuse reports it), the stream does not keep its last frame for the
// consumer to acquire again (EGL_SUPPORT_REUSE_NV false, as NVIDIA's EGLStream samples make
// theirs): by default a stream holds the frame a CUDA consumer released, so its producer never
// gets it back, and an acquire with no new frame may hand out the old one again.
func (c *Context) NewStream() (uintptr, error) {
	create, err := c.ext("EGL_KHR_stream", "eglCreateStreamKHR")
	if err != nil {
		return 0, err
	}
	attrs := []int32{eglNone}
	if c.NoReuse() {
		attrs = []int32{eglSupportReuseNV, eglFalse, eglNone}
	}
	s, _, _ := purego.SyscallN(create, c.Display, uintptr(unsafe.Pointer(&attrs[0])))
	runtime.KeepAlive(attrs)
	if s == 0 {
		return 0, c.l.eglError("eglCreateStreamKHR")
	}
	return s, nil
}

// NoReuse reports whether NewStream's streams give a released frame back to the producer at
// once (EGL_NV_stream_reset).
func (c *Context) NoReuse() bool { return c.HasExtension("EGL_NV_stream_reset") }

// StreamState is EGL_STREAM_STATE_KHR of stream s (one of the Stream* states).
func (c *Context) StreamState(s uintptr) (int32, error) {
	query, err := c.ext("EGL_KHR_stream", "eglQueryStreamKHR")
	if err != nil {
		return 0, err
	}
	var v int32
	if r, _, _ := purego.SyscallN(query, c.Display, s, eglStreamStateKHR, uintptr(unsafe.Pointer(&v))); uint32(r) == 0 {
		return 0, c.l.eglError("eglQueryStreamKHR")
	}
	return v, nil
}

// DestroyStream destroys an EGLStreamKHR.
func (c *Context) DestroyStream(s uintptr) error {
	destroy, err := c.ext("EGL_KHR_stream", "eglDestroyStreamKHR")
	if err != nil {
		return err
	}
	if r, _, _ := purego.SyscallN(destroy, c.Display, s); uint32(r) == 0 {
		return c.l.eglError("eglDestroyStreamKHR")
	}
	return nil
}
