package egl

import (
	"fmt"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/gpuactor/gpuactor/internal/clib"
)

// GL enums the wrappers and their callers use.
const (
	Texture2D         = 0x0DE1 // GL_TEXTURE_2D
	RGBA8             = 0x8058 // GL_RGBA8
	R32F              = 0x822E // GL_R32F
	RGBA              = 0x1908 // GL_RGBA
	Red               = 0x1903 // GL_RED
	UnsignedByte      = 0x1401 // GL_UNSIGNED_BYTE
	Float             = 0x1406 // GL_FLOAT
	glVersion         = 0x1F02
	glRenderer        = 0x1F01
	glArrayBuffer     = 0x8892
	glDynamicDraw     = 0x88E8
	glMinFilter       = 0x2801
	glMagFilter       = 0x2800
	glNearest         = 0x2600
	glReadFramebuffer = 0x8CA8
	glDrawFramebuffer = 0x8CA9
	glColorAttach0    = 0x8CE0
	glFBComplete      = 0x8CD5
	glPackAlignment   = 0x0D05
	glUnpackAlignment = 0x0CF5
	glColorBufferBit  = 0x4000
)

// glNames are the GL entry points the wrappers call, loaded with eglGetProcAddress.
var glNames = []string{"glGetError", "glGetString", "glGenBuffers", "glDeleteBuffers", "glBindBuffer", "glBufferData",
	"glBufferSubData", "glGetBufferSubData", "glGenTextures", "glDeleteTextures", "glBindTexture", "glTexStorage2D",
	"glTexSubImage2D", "glTexParameteri", "glGenFramebuffers", "glDeleteFramebuffers", "glBindFramebuffer",
	"glFramebufferTexture2D", "glCheckFramebufferStatus", "glBlitFramebuffer", "glReadPixels", "glFinish", "glFlush", "glPixelStorei"}

// GL is the GL functions of a context. Call them on the thread the context is current on.
type GL struct {
	fns map[string]uintptr
}

func loadGL(l *lib) (*GL, error) {
	g := &GL{fns: map[string]uintptr{}}
	for _, n := range glNames {
		a := l.proc(n)
		if a == 0 {
			return nil, fmt.Errorf("gpuactor/egl: eglGetProcAddress(%q) found nothing", n)
		}
		g.fns[n] = a
	}
	return g, nil
}

// call calls GL function name; uintptrescapes, as lib.call.
//
//go:uintptrescapes
func (g *GL) call(name string, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(g.fns[name], args...)
	return r
}

// check is glGetError after op: an error naming op, or nil.
func (g *GL) check(op string) error {
	if code := uint32(g.call("glGetError")); code != 0 {
		// Drain the rest: GL keeps one flag per kind of error.
		for i := 0; i < 8 && uint32(g.call("glGetError")) != 0; i++ {
		}
		return fmt.Errorf("gpuactor/egl: %s: GL error %#x", op, code)
	}
	return nil
}

// Version is GL_VERSION and GL_RENDERER of the current context.
func (g *GL) Version() string {
	return clib.GoString(g.call("glGetString", glVersion)) + " (" + clib.GoString(g.call("glGetString", glRenderer)) + ")"
}

// NewBuffer makes a GL buffer object holding data (GL_DYNAMIC_DRAW) and returns its name.
func (g *GL) NewBuffer(data []byte) (uint32, error) {
	if len(data) == 0 {
		return 0, fmt.Errorf("gpuactor/egl: NewBuffer of no bytes")
	}
	var name uint32
	g.call("glGenBuffers", 1, uintptr(unsafe.Pointer(&name)))
	g.call("glBindBuffer", glArrayBuffer, uintptr(name))
	g.call("glBufferData", glArrayBuffer, uintptr(len(data)), uintptr(unsafe.Pointer(&data[0])), glDynamicDraw)
	g.call("glBindBuffer", glArrayBuffer, 0)
	return name, g.check("making a GL buffer")
}

// BufferSubData writes data into buffer at byte off.
func (g *GL) BufferSubData(buffer uint32, off int, data []byte) error {
	g.call("glBindBuffer", glArrayBuffer, uintptr(buffer))
	g.call("glBufferSubData", glArrayBuffer, uintptr(off), uintptr(len(data)), uintptr(unsafe.Pointer(&data[0])))
	g.call("glBindBuffer", glArrayBuffer, 0)
	return g.check("glBufferSubData")
}

// GetBufferSubData reads len(out) bytes of buffer from byte off.
func (g *GL) GetBufferSubData(buffer uint32, off int, out []byte) error {
	g.call("glBindBuffer", glArrayBuffer, uintptr(buffer))
	g.call("glGetBufferSubData", glArrayBuffer, uintptr(off), uintptr(len(out)), uintptr(unsafe.Pointer(&out[0])))
	g.call("glBindBuffer", glArrayBuffer, 0)
	return g.check("glGetBufferSubData")
}

// DeleteBuffer deletes a buffer object.
func (g *GL) DeleteBuffer(buffer uint32) error {
	g.call("glDeleteBuffers", 1, uintptr(unsafe.Pointer(&buffer)))
	return g.check("glDeleteBuffers")
}

// NewTexture2D makes an immutable w×h 2D texture of internalFormat (RGBA8, R32F), one level,
// nearest filtering, and returns its name.
func (g *GL) NewTexture2D(internalFormat uint32, w, h int) (uint32, error) {
	var name uint32
	g.call("glGenTextures", 1, uintptr(unsafe.Pointer(&name)))
	g.call("glBindTexture", Texture2D, uintptr(name))
	g.call("glTexStorage2D", Texture2D, 1, uintptr(internalFormat), uintptr(w), uintptr(h))
	g.call("glTexParameteri", Texture2D, glMinFilter, glNearest)
	g.call("glTexParameteri", Texture2D, glMagFilter, glNearest)
	g.call("glBindTexture", Texture2D, 0)
	return name, g.check("making a GL texture")
}

// TexSubImage2D writes data (format and type: RGBA/UnsignedByte, Red/Float) into the whole
// w×h level 0 of texture.
func (g *GL) TexSubImage2D(texture uint32, w, h int, format, typ uint32, data []byte) error {
	g.call("glBindTexture", Texture2D, uintptr(texture))
	g.call("glPixelStorei", glUnpackAlignment, 1)
	g.call("glTexSubImage2D", Texture2D, 0, 0, 0, uintptr(w), uintptr(h), uintptr(format), uintptr(typ), uintptr(unsafe.Pointer(&data[0])))
	g.call("glBindTexture", Texture2D, 0)
	return g.check("glTexSubImage2D")
}

// DeleteTexture deletes a texture.
func (g *GL) DeleteTexture(texture uint32) error {
	g.call("glDeleteTextures", 1, uintptr(unsafe.Pointer(&texture)))
	return g.check("glDeleteTextures")
}

// DrawAndRead draws texture (w×h, internalFormat) into a framebuffer of a new texture of the
// same format (glBlitFramebuffer, a GL-side copy through the render pipeline's output) and
// reads that framebuffer back with glReadPixels (format, typ) into out.
func (g *GL) DrawAndRead(texture uint32, internalFormat uint32, w, h int, format, typ uint32, out []byte) error {
	target, err := g.NewTexture2D(internalFormat, w, h)
	if err != nil {
		return err
	}
	defer g.DeleteTexture(target) //nolint:errcheck // cleanup
	var fbs [2]uint32
	g.call("glGenFramebuffers", 2, uintptr(unsafe.Pointer(&fbs[0])))
	defer func() { g.call("glDeleteFramebuffers", 2, uintptr(unsafe.Pointer(&fbs[0]))) }()
	g.call("glBindFramebuffer", glReadFramebuffer, uintptr(fbs[0]))
	g.call("glFramebufferTexture2D", glReadFramebuffer, glColorAttach0, Texture2D, uintptr(texture), 0)
	g.call("glBindFramebuffer", glDrawFramebuffer, uintptr(fbs[1]))
	g.call("glFramebufferTexture2D", glDrawFramebuffer, glColorAttach0, Texture2D, uintptr(target), 0)
	for _, t := range []uintptr{glReadFramebuffer, glDrawFramebuffer} {
		if st := uint32(g.call("glCheckFramebufferStatus", t)); st != glFBComplete {
			return fmt.Errorf("gpuactor/egl: framebuffer %#x incomplete: status %#x", t, st)
		}
	}
	g.call("glBlitFramebuffer", 0, 0, uintptr(w), uintptr(h), 0, 0, uintptr(w), uintptr(h), glColorBufferBit, glNearest)
	if err := g.check("glBlitFramebuffer"); err != nil {
		return err
	}
	g.call("glBindFramebuffer", glReadFramebuffer, uintptr(fbs[1]))
	g.call("glPixelStorei", glPackAlignment, 1)
	g.call("glReadPixels", 0, 0, uintptr(w), uintptr(h), uintptr(format), uintptr(typ), uintptr(unsafe.Pointer(&out[0])))
	err = g.check("glReadPixels")
	g.call("glBindFramebuffer", glReadFramebuffer, 0)
	g.call("glBindFramebuffer", glDrawFramebuffer, 0)
	return err
}

// Finish waits for the context's GL work to complete.
func (g *GL) Finish() error {
	g.call("glFinish")
	return g.check("glFinish")
}
