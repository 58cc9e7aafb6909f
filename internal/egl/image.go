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
	eglSyncFenceKHR      = 0x30F9
	eglStreamStateKHR    = 0x3214
)

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
// must be current on the calling thread.
func (c *Context) ImageFromTexture(tex uint32) (uintptr, error) {
	create, err := c.ext("EGL_KHR_gl_texture_2D_image", "eglCreateImageKHR")
	if err != nil {
		return 0, err
	}
	attrs := []int32{eglGLTextureLevelKHR, 0, eglNone}
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

// NewStream makes an EGLStreamKHR of the display (EGL_KHR_stream).
func (c *Context) NewStream() (uintptr, error) {
	create, err := c.ext("EGL_KHR_stream", "eglCreateStreamKHR")
	if err != nil {
		return 0, err
	}
	attrs := []int32{eglNone}
	s, _, _ := purego.SyscallN(create, c.Display, uintptr(unsafe.Pointer(&attrs[0])))
	runtime.KeepAlive(attrs)
	if s == 0 {
		return 0, c.l.eglError("eglCreateStreamKHR")
	}
	return s, nil
}

// StreamState is EGL_STREAM_STATE_KHR of stream s.
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
