// Package clib holds what every package that loads a C library through purego needs alike:
// reading the C strings it returns and ordering the versions in its file names.
package clib

import (
	"strconv"
	"strings"
	"unsafe"
)

// GoString copies the NUL-terminated C string at address p (0 gives ""). The word is
// reinterpreted rather than converted to unsafe.Pointer: the memory is C's, and this form is
// what vet and checkptr accept for foreign addresses.
func GoString(p uintptr) string {
	if p == 0 {
		return ""
	}
	base := *(*unsafe.Pointer)(unsafe.Pointer(&p))
	n := 0
	for *(*byte)(unsafe.Add(base, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(base), n))
}

// Digits extracts the runs of decimal digits in s: "/usr/local/cuda-12.10" gives [12 10].
func Digits(s string) []int {
	var out []int
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// CompareVersions orders two versions given as Digits: negative when a is older, 0 when
// equal, positive when newer; a version that extends another is the newer.
func CompareVersions(a, b []int) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] - b[i]
		}
	}
	return len(a) - len(b)
}
