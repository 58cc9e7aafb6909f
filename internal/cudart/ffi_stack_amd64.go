//go:build linux && amd64

package cudart

import "unsafe"

// A struct of more than 16 bytes passed by value (SysV class MEMORY) travels on the stack, in
// eightbytes after any stack arguments the integer registers left over; it takes no register.
// cudaEGLStreamProducerPresentFrame takes a 280-byte cudaEglFrame so, 35 words: more than
// purego.SyscallN (32 words in all) or ffiTrampoline (six stack words) carry.
// ffiStackTrampoline takes the six register words and any number of stack words.

var ffiStackTrampolineABI0 uintptr // the address of ffiStackTrampoline, set in ffi_stack_amd64.s

// stackFrame is a call for ffiStackTrampoline: the layout its assembly reads.
type stackFrame struct {
	fn    uintptr
	regs  [6]uintptr
	n     uintptr  // stack words
	words *uintptr // the first of n stack words
	ret   uintptr
}

// stackCall calls fn with regs in the integer argument registers and words on the stack, and
// returns its 32-bit result.
//
//go:uintptrescapes
func stackCall(fn uintptr, regs [6]uintptr, words []uintptr) int32 {
	f := &stackFrame{fn: fn, regs: regs, n: uintptr(len(words))}
	if len(words) > 0 {
		f.words = &words[0]
	}
	runtimeCgocall(ffiStackTrampolineABI0, unsafe.Pointer(f))
	return int32(f.ret)
}

// presentFrame calls cudaEGLStreamProducerPresentFrame(conn, *frame, stream): the frame is a
// by-value argument, so its words go on the stack and the stream pointer takes the second
// integer register.
func presentFrame(fn uintptr, conn *uintptr, frame *eglFrame, stream *uintptr) int32 {
	const n = unsafe.Sizeof(eglFrame{}) / 8
	words := unsafe.Slice((*uintptr)(unsafe.Pointer(frame)), n)
	return stackCall(fn, [6]uintptr{uintptr(unsafe.Pointer(conn)), uintptr(unsafe.Pointer(stream))}, words)
}
