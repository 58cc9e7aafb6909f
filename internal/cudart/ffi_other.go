//go:build !(linux && amd64)

package cudart

import "github.com/ebitengine/purego"

// ffiCall calls f.fn with f.w as its integer arguments, through purego elsewhere.
func ffiCall(f *callFrame) uintptr {
	ret, _, _ := purego.SyscallN(f.fn, f.w[:]...)
	return ret
}
