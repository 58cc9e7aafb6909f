//go:build linux && amd64

package cudart

import (
	"unsafe"
)

// The hot calls skip purego.SyscallN: per call it copies its arguments through two 32-word
// arrays and a pooled 50-word struct, and its trampoline loads 8 vector and 32 integer slots,
// which cost about as much as the cheapest CUDA calls themselves. Every runtime call we make
// takes at most 11 integer words and no floats or structs by value (dim3 is packed into
// words), so a trampoline that loads only integer words suffices. It still enters C through
// runtime.cgocall, exactly as purego does, so the scheduler sees a system call.

//go:linkname runtimeCgocall runtime.cgocall
func runtimeCgocall(fn uintptr, arg unsafe.Pointer) int32

var ffiTrampolineABI0 uintptr // the address of ffiTrampoline, set in ffi_amd64.s

var ffiRepeatTrampolineABI0 uintptr // the address of ffiRepeatTrampoline, set in ffi_amd64.s

// ffiCall calls f.fn with f.w as its integer arguments and returns its RAX.
func ffiCall(f *callFrame) uintptr {
	runtimeCgocall(ffiTrampolineABI0, unsafe.Pointer(f))
	return f.ret
}

// ffiRepeat calls f.fn with f.w[:6] as its integer arguments up to n times, all from one
// crossing into C, and stops at the first call whose 32-bit result is not zero. It returns
// the number of calls that returned zero and the first result that did not (zero if none).
// A replay loop of cheap calls (cudaGraphLaunch of a small graph, ~2 µs) otherwise pays the
// crossing per call: a few percent of each.
func ffiRepeat(f *callFrame, n int) (done int, ret uintptr) {
	if n <= 0 {
		return 0, 0
	}
	f.w[6] = uintptr(n)
	runtimeCgocall(ffiRepeatTrampolineABI0, unsafe.Pointer(f))
	return int(f.w[7]), f.ret
}
