package cudart

import "unsafe"

// cstr returns a NUL-terminated copy of s in Go memory. Pass it to C as
// uintptr(unsafe.Pointer(p)) written inside the purego.SyscallN call expression, which keeps it
// alive for the call.
func cstr(s string) *byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return &b[0]
}

// gostring copies the NUL-terminated C string at address p (0 gives "").
func gostring(p uintptr) string {
	if p == 0 {
		return ""
	}
	// Reinterpret the word instead of converting uintptr to unsafe.Pointer: the memory is C's,
	// and this form is what vet and checkptr accept for foreign addresses.
	base := *(*unsafe.Pointer)(unsafe.Pointer(&p))
	n := 0
	for *(*byte)(unsafe.Add(base, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(base), n))
}

// GoString is gostring for packages that call C through purego themselves (the bench's C++
// baseline loaded in-process).
func GoString(p uintptr) string { return gostring(p) }

// cbytes returns the prefix of b before its first NUL.
func cbytes(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
