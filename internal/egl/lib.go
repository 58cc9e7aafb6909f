package egl

import (
	"fmt"
	"os"
	"path/filepath"
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

// Error lists what was tried.
func (e *UnavailableError) Error() string {
	return "gpuactor/egl: no headless EGL: " + strings.Join(e.Tried, "; ")
}

// LibraryEnv names a libEGL to load before the usual names (a path, say).
const LibraryEnv = "GPUACTOR_EGL_LIBRARY"

// GLRootEnv names a directory holding glvnd's loaders (libEGL.so.1 and libGLdispatch.so.0),
// unpacked from Debian packages where the system has none. Without it, the first
// .gl/root/usr/lib/x86_64-linux-gnu found in the working directory or above it is used (where
// interop/testdata/run-gl.sh unpacks the packages scripts/gl-loaders.sh downloads).
const GLRootEnv = "GPUACTOR_GL_ROOT"

// carriedLoaders is the directory of carried glvnd loaders, or "".
func carriedLoaders() string {
	if d := os.Getenv(GLRootEnv); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for range 8 {
		d := filepath.Join(dir, ".gl", "root", "usr", "lib", "x86_64-linux-gnu")
		if _, err := os.Stat(filepath.Join(d, "libEGL.so.1")); err == nil {
			return d
		}
		up := filepath.Dir(dir)
		if up == dir {
			break
		}
		dir = up
	}
	return ""
}

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
	var tried []string
	if d := carriedLoaders(); d != "" {
		// libEGL.so.1 needs libGLdispatch.so.0, which the dynamic loader would look for on its
		// usual path only: loaded first by its full path, it is there under its soname.
		if _, err := dlopen(filepath.Join(d, "libGLdispatch.so.0")); err != nil {
			tried = append(tried, fmt.Sprintf("%s: %v", filepath.Join(d, "libGLdispatch.so.0"), err))
		}
		names = append([]string{filepath.Join(d, "libEGL.so.1")}, names...)
	}
	if p := os.Getenv(LibraryEnv); p != "" {
		names = append([]string{p}, names...)
	}
	for _, n := range names {
		h, err := dlopen(n)
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s: %v", n, err))
			continue
		}
		gpa, err := dlsym(h, "eglGetProcAddress")
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s: no eglGetProcAddress: %v", n, err))
			continue
		}
		l := &lib{path: n, getProcAddress: gpa, fns: map[string]uintptr{}}
		for _, f := range eglCore {
			a, err := dlsym(h, f)
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

// call calls EGL function name (one of eglCore) and returns its result. Like
// purego.SyscallN it is uintptrescapes: a Go pointer converted to uintptr in the call
// expression stays alive and in place for the call.
//
//go:uintptrescapes
func (l *lib) call(name string, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(l.fns[name], args...)
	return r
}

// eglError is eglGetError's code for call op, as an error.
func (l *lib) eglError(op string) error {
	code := uint32(l.call("eglGetError"))
	return fmt.Errorf("gpuactor/egl: %s failed: EGL error %#x", op, code)
}
