package egl

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// UnavailableError says why no EGL context could be made: every library and device tried,
// and what each said.
type UnavailableError struct {
	Tried []string
}

func (e *UnavailableError) Error() string {
	return "gpuactor/egl: no headless EGL: " + strings.Join(e.Tried, "; ")
}

// LibraryEnv names a libEGL to load before the usual names (a path, say).
const LibraryEnv = "GPUACTOR_EGL_LIBRARY"

// libraries are the names tried in order: glvnd's loader, then the vendor libraries
// directly (NVIDIA's libEGL_nvidia.so.0 exports the EGL entry points too, and needs no
// loader).
var libraries = []string{"libEGL.so.1", "libEGL.so", "libEGL_nvidia.so.0"}

// lib is a loaded libEGL with its entry points.
type lib struct {
	path           string
	getProcAddress uintptr
	fns            map[string]uintptr
}

var (
	loadOnce sync.Once
	loaded   *lib
	loadErr  error
)

// load opens libEGL once per process: the loaded library is process state, like libcudart.
func load() (*lib, error) {
	loadOnce.Do(func() { loaded, loadErr = open() })
	return loaded, loadErr
}

func open() (*lib, error) {
	names := libraries
	if p := os.Getenv(LibraryEnv); p != "" {
		names = append([]string{p}, names...)
	}
	var tried []string
	for _, n := range names {
		h, err := purego.Dlopen(n, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s: %v", n, err))
			continue
		}
		gpa, err := purego.Dlsym(h, "eglGetProcAddress")
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s: no eglGetProcAddress: %v", n, err))
			continue
		}
		l := &lib{path: n, getProcAddress: gpa, fns: map[string]uintptr{}}
		for _, f := range eglCore {
			a, err := purego.Dlsym(h, f)
			if err != nil {
				a = l.proc(f)
			}
			if a == 0 {
				tried = append(tried, fmt.Sprintf("%s: no %s", n, f))
				l = nil
				break
			}
			l.fns[f] = a
		}
		if l != nil {
			return l, nil
		}
	}
	return nil, &UnavailableError{Tried: tried}
}

// eglCore are the EGL 1.4/1.5 entry points every libEGL exports.
var eglCore = []string{"eglGetError", "eglQueryString", "eglInitialize", "eglTerminate", "eglChooseConfig",
	"eglCreatePbufferSurface", "eglDestroySurface", "eglBindAPI", "eglCreateContext", "eglDestroyContext",
	"eglMakeCurrent", "eglGetCurrentContext", "eglReleaseThread"}

// proc is eglGetProcAddress(name): an extension's (or GL's) entry point, or 0.
func (l *lib) proc(name string) uintptr {
	b := append([]byte(name), 0)
	r, _, _ := purego.SyscallN(l.getProcAddress, uintptr(unsafe.Pointer(&b[0])))
	return r
}

// call calls EGL function name (one of eglCore) and returns its result.
func (l *lib) call(name string, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(l.fns[name], args...)
	return r
}

// eglError is eglGetError's code for call op, as an error.
func (l *lib) eglError(op string) error {
	code := uint32(l.call("eglGetError"))
	return fmt.Errorf("gpuactor/egl: %s failed: EGL error %#x", op, code)
}
