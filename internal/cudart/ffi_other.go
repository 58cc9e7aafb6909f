//go:build !(linux && amd64)

package cudart

import "github.com/ebitengine/purego"

// ffiCall calls f.fn with f.w as its integer arguments, through purego elsewhere.
func ffiCall(f *callFrame) uintptr {
	ret, _, _ := purego.SyscallN(f.fn, f.w[:]...)
	return ret
}

// ffiRepeat calls f.fn with f.w[:6] up to n times and stops at the first call whose 32-bit
// result is not zero, as the amd64 trampoline does, one purego call at a time.
func ffiRepeat(f *callFrame, n int) (done int, ret uintptr) {
	for done < n {
		if r, _, _ := purego.SyscallN(f.fn, f.w[:6]...); int32(r) != 0 {
			return done, r
		}
		done++
	}
	return done, 0
}
