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

// ffiCall calls f.fn with f.w as its integer arguments and returns its RAX.
func ffiCall(f *callFrame) uintptr {
	runtimeCgocall(ffiTrampolineABI0, unsafe.Pointer(f))
	return f.ret
}
