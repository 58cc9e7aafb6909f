package cudart

import "github.com/gpuactor/gpuactor/internal/clib"

// cstr returns a NUL-terminated copy of s in Go memory. Pass it to C as
// uintptr(unsafe.Pointer(p)) written inside the purego.SyscallN call expression, which keeps it
// alive for the call.
func cstr(s string) *byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return &b[0]
}

// GoString is gostring for packages that call C through purego themselves (the bench's C++
// baseline loaded in-process).
func GoString(p uintptr) string { return clib.GoString(p) }

// cbytes returns the prefix of b before its first NUL.
func cbytes(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
