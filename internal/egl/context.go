package egl

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/gpuactor/gpuactor/internal/clib"
)

// EGL enums (EGL 1.5 and the extensions used).
const (
	eglNone                  = 0x3038
	eglExtensions            = 0x3055
	eglVendor                = 0x3053
	eglSurfaceType           = 0x3033
	eglPbufferBit            = 0x0001
	eglRenderableType        = 0x3040
	eglOpenGLBit             = 0x0008
	eglRedSize               = 0x3024
	eglGreenSize             = 0x3023
	eglBlueSize              = 0x3022
	eglAlphaSize             = 0x3021
	eglWidth                 = 0x3057
	eglHeight                = 0x3056
	eglOpenGLAPI             = 0x30A2
	eglContextMajorVersion   = 0x3098
	eglContextMinorVersion   = 0x30FB
	eglContextProfileMask    = 0x30FD
	eglContextCoreProfileBit = 0x0001
	eglPlatformDeviceEXT     = 0x313F
	eglCUDADeviceNV          = 0x323A
	eglDeviceExtensions      = 0x3055 // EGL_EXTENSIONS, asked of a device
)

// Options choose the EGL device.
type Options struct {
	// CUDADevice, when not negative, is the CUDA device ordinal the EGL device must be
	// (EGL_CUDA_DEVICE_NV); a device that cannot say is not taken.
	CUDADevice int
	// Width and Height are the pbuffer's size (16×16 when 0).
	Width, Height int
}

// AnyDevice takes the first EGL device that makes a context (Mesa's software device, say).
func AnyDevice() Options { return Options{CUDADevice: -1} }

// ForCUDADevice takes the EGL device of CUDA device ordinal.
func ForCUDADevice(ordinal int) Options { return Options{CUDADevice: ordinal} }

// Context is an EGL display, surface (pbuffer, or none) and desktop OpenGL core context. It
// implements interop.GLContext. Its GL calls (GL) must run on the thread it is current on.
type Context struct {
	l        *lib
	Display  uintptr // EGLDisplay
	Surface  uintptr // EGLSurface, or 0 when surfaceless
	Context  uintptr // EGLContext
	config   uintptr
	Library  string // the libEGL loaded
	Vendor   string // EGL_VENDOR of the display
	Device   int    // the CUDA device of the EGL device, or -1 when it cannot say
	exts     string
	gl       *GL
	released bool
}

// Open makes a headless context on the EGL device o chooses. It leaves no context current.
// An *UnavailableError says why none could be made.
func Open(o Options) (*Context, error) {
	l, err := load()
	if err != nil {
		return nil, err
	}
	if o.Width <= 0 {
		o.Width = 16
	}
	if o.Height <= 0 {
		o.Height = 16
	}
	client := l.queryString(0, eglExtensions)
	var tried []string
	queryDevices := l.proc("eglQueryDevicesEXT")
	getPlatformDisplay := l.proc("eglGetPlatformDisplayEXT")
	if !strings.Contains(client, "EGL_EXT_device_enumeration") && !strings.Contains(client, "EGL_EXT_device_base") || queryDevices == 0 || getPlatformDisplay == 0 {
		return nil, &UnavailableError{Tried: []string{fmt.Sprintf("%s: no EGL_EXT_device_enumeration and EGL_EXT_platform_device (client extensions: %q)", l.path, client)}}
	}
	var devs [16]uintptr
	var n int32
	purego.SyscallN(queryDevices, uintptr(len(devs)), uintptr(unsafe.Pointer(&devs[0])), uintptr(unsafe.Pointer(&n)))
	if n <= 0 {
		return nil, &UnavailableError{Tried: []string{fmt.Sprintf("%s: eglQueryDevicesEXT found no EGL device", l.path)}}
	}
	queryDeviceAttrib := l.proc("eglQueryDeviceAttribEXT")
	queryDeviceString := l.proc("eglQueryDeviceStringEXT")
	for i, d := range devs[:n] {
		cudaDev := -1
		var exts string
		if queryDeviceString != 0 {
			r, _, _ := purego.SyscallN(queryDeviceString, d, eglDeviceExtensions)
			exts = clib.GoString(r)
		}
		if queryDeviceAttrib != 0 { // EGL_FALSE, harmlessly, on a device without EGL_NV_device_cuda
			var v int64
			if r, _, _ := purego.SyscallN(queryDeviceAttrib, d, eglCUDADeviceNV, uintptr(unsafe.Pointer(&v))); uint32(r) != 0 {
				cudaDev = int(v)
			}
		}
		if o.CUDADevice >= 0 && cudaDev != o.CUDADevice {
			tried = append(tried, fmt.Sprintf("EGL device %d (extensions %q) is CUDA device %d, not %d", i, exts, cudaDev, o.CUDADevice))
			continue
		}
		c, err := l.openOn(getPlatformDisplay, d, o)
		if err != nil {
			tried = append(tried, fmt.Sprintf("EGL device %d: %v", i, err))
			continue
		}
		c.Device = cudaDev
		return c, nil
	}
	return nil, &UnavailableError{Tried: append([]string{"library " + l.path}, tried...)}
}

// openOn makes the display, surface and context of EGL device d.
func (l *lib) openOn(getPlatformDisplay, d uintptr, o Options) (*Context, error) {
	dpy, _, _ := purego.SyscallN(getPlatformDisplay, eglPlatformDeviceEXT, d, 0)
	if dpy == 0 {
		return nil, l.eglError("eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT)")
	}
	var major, minor int32
	if l.call("eglInitialize", dpy, uintptr(unsafe.Pointer(&major)), uintptr(unsafe.Pointer(&minor))) == 0 {
		return nil, l.eglError("eglInitialize")
	}
	c := &Context{l: l, Display: dpy, Library: l.path, Vendor: l.queryString(dpy, eglVendor), exts: l.queryString(dpy, eglExtensions)}
	fail := func(err error) (*Context, error) {
		c.Close()
		return nil, err
	}
	if l.call("eglBindAPI", eglOpenGLAPI) == 0 {
		return fail(l.eglError("eglBindAPI(EGL_OPENGL_API)"))
	}
	// A pbuffer config where there is one; else any GL config, surfaceless.
	pbuffer := true
	cfg, ok := l.chooseConfig(dpy, []int32{eglSurfaceType, eglPbufferBit, eglRenderableType, eglOpenGLBit, eglRedSize, 8, eglGreenSize, 8, eglBlueSize, 8, eglAlphaSize, 8, eglNone})
	if !ok {
		pbuffer = false
		if !strings.Contains(c.exts, "EGL_KHR_surfaceless_context") {
			return fail(fmt.Errorf("gpuactor/egl: no pbuffer config and no EGL_KHR_surfaceless_context"))
		}
		cfg, ok = l.chooseConfig(dpy, []int32{eglSurfaceType, 0, eglRenderableType, eglOpenGLBit, eglNone})
		if !ok {
			return fail(fmt.Errorf("gpuactor/egl: no OpenGL config"))
		}
	}
	c.config = cfg
	if pbuffer {
		attrs := []int32{eglWidth, int32(o.Width), eglHeight, int32(o.Height), eglNone}
		c.Surface = l.call("eglCreatePbufferSurface", dpy, cfg, uintptr(unsafe.Pointer(&attrs[0])))
		runtime.KeepAlive(attrs)
		if c.Surface == 0 {
			return fail(l.eglError("eglCreatePbufferSurface"))
		}
	}
	for _, v := range [][2]int32{{4, 6}, {4, 5}, {4, 3}} {
		attrs := []int32{eglContextMajorVersion, v[0], eglContextMinorVersion, v[1], eglContextProfileMask, eglContextCoreProfileBit, eglNone}
		c.Context = l.call("eglCreateContext", dpy, cfg, 0, uintptr(unsafe.Pointer(&attrs[0])))
		runtime.KeepAlive(attrs)
		if c.Context != 0 {
			break
		}
	}
	if c.Context == 0 {
		return fail(l.eglError("eglCreateContext(OpenGL 4.3+ core)"))
	}
	return c, nil
}

func (l *lib) chooseConfig(dpy uintptr, attrs []int32) (uintptr, bool) {
	var cfg uintptr
	var n int32
	ok := l.call("eglChooseConfig", dpy, uintptr(unsafe.Pointer(&attrs[0])), uintptr(unsafe.Pointer(&cfg)), 1, uintptr(unsafe.Pointer(&n)))
	runtime.KeepAlive(attrs)
	return cfg, ok != 0 && n > 0
}

func (l *lib) queryString(dpy uintptr, name int32) string {
	return clib.GoString(l.call("eglQueryString", dpy, uintptr(name)))
}

// HasExtension reports whether the display has EGL extension name.
func (c *Context) HasExtension(name string) bool {
	for _, e := range strings.Fields(c.exts) {
		if e == name {
			return true
		}
	}
	return false
}

// MakeCurrent makes the context current on the calling thread.
func (c *Context) MakeCurrent() error {
	if c.l.call("eglMakeCurrent", c.Display, c.Surface, c.Surface, c.Context) == 0 {
		return c.l.eglError("eglMakeCurrent")
	}
	return nil
}

// ReleaseCurrent makes no context current on the calling thread.
func (c *Context) ReleaseCurrent() error {
	if c.l.call("eglMakeCurrent", c.Display, 0, 0, 0) == 0 {
		return c.l.eglError("eglMakeCurrent(EGL_NO_CONTEXT)")
	}
	return nil
}

// GL is the context's GL functions, loaded on first use; call them on the thread the context
// is current on.
func (c *Context) GL() (*GL, error) {
	if c.gl == nil {
		gl, err := loadGL(c.l)
		if err != nil {
			return nil, err
		}
		c.gl = gl
	}
	return c.gl, nil
}

// Close destroys the context and surface and terminates the display. Call it on a thread
// where the context is not current, or on the thread where it is (it is released first).
func (c *Context) Close() {
	if c.released {
		return
	}
	c.released = true
	if c.l.call("eglGetCurrentContext") == c.Context && c.Context != 0 {
		c.l.call("eglMakeCurrent", c.Display, 0, 0, 0)
	}
	if c.Context != 0 {
		c.l.call("eglDestroyContext", c.Display, c.Context)
	}
	if c.Surface != 0 {
		c.l.call("eglDestroySurface", c.Display, c.Surface)
	}
	c.l.call("eglTerminate", c.Display)
}
