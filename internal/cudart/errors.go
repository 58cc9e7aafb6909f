package cudart

import (
	"fmt"

	"github.com/ebitengine/purego"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/clib"
)

// call invokes libcudart symbol id with hand-packed argument words and maps its cudaError_t.
// Pointers to Go memory must be converted with uintptr(unsafe.Pointer(p)) inside the call
// expression: like purego.SyscallN, call is marked uintptrescapes, which keeps them alive and
// in place for the duration of the call.
//
//go:uintptrescapes
func (r *Runtime) call(id int, args ...uintptr) error {
	code, err := r.rawCall(id, args...)
	if code == 0 {
		return err
	}
	return r.newError(runtimeSymNames[id], code)
}

// rawCall is call without the error mapping: the cudaError_t, and an error only when the symbol
// is missing.
//
//go:uintptrescapes
func (r *Runtime) rawCall(id int, args ...uintptr) (int32, error) {
	f := getFrame()
	defer putFrame(f)
	if len(args) > len(f.w) {
		return 0, fmt.Errorf("gpuactor/cudart: %s called with %d argument words, the trampoline takes %d", runtimeSymNames[id], len(args), len(f.w))
	}
	copy(f.w[:], args)
	return r.invoke(id, f) // cudaError_t is a C int: invoke truncates RAX to it
}

// newError builds the error for a failed call op.
func (r *Runtime) newError(op string, code int32) error {
	if code == 0 {
		return nil
	}
	return &cudaerr.Error{Op: op, Code: cudaerr.Code(code), Message: r.errorString(code)}
}

// errorString is cudaGetErrorString's text for code (cached), or the code's own description
// when the runtime cannot say.
func (r *Runtime) errorString(code int32) string {
	r.msgMu.Lock()
	msg, ok := r.msgs[code]
	r.msgMu.Unlock()
	if ok {
		return msg
	}
	msg = r.cString(fnGetErrorString, code)
	if msg == "" {
		msg = cudaerr.Code(code).Message()
	}
	r.msgMu.Lock()
	r.msgs[code] = msg
	r.msgMu.Unlock()
	return msg
}

// cString calls a `const char *f(int)` function, returning "" when it is missing.
func (r *Runtime) cString(id int, code int32) string {
	fn, err := r.syms.get(id)
	if err != nil {
		return ""
	}
	p, _, _ := purego.SyscallN(fn, uintptr(uint32(code)))
	return clib.GoString(p)
}

// ErrorName is the runtime's identifier for code (cudaGetErrorName), e.g.
// "cudaErrorMemoryAllocation".
func (r *Runtime) ErrorName(code cudaerr.Code) string {
	if s := r.cString(fnGetErrorName, int32(code)); s != "" {
		return s
	}
	return code.Name()
}

// ErrorString is the runtime's description of code (cudaGetErrorString), e.g. "out of memory".
func (r *Runtime) ErrorString(code cudaerr.Code) string { return r.errorString(int32(code)) }

// ErrorFor returns the error the runtime would report for code from call op (nil for success).
func (r *Runtime) ErrorFor(op string, code cudaerr.Code) error { return r.newError(op, int32(code)) }

// codeNotReady is cudaErrorNotReady (and CUDA_ERROR_NOT_READY).
const codeNotReady = int32(cudaerr.NotReady)
