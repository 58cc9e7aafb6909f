package cudart

import (
	"runtime"
	"structs"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// instantiateParams is cudaGraphInstantiateParams (12.0+; 32 bytes).
type instantiateParams struct {
	_            structs.HostLayout
	flags        uint64
	uploadStream uintptr
	errNode      uintptr
	result       int32
}

// GraphInstantiateWithParams instantiates g (cudaGraphInstantiateWithParams, 12.0+): the
// result and the node that failed come back besides the error.
func (r *Runtime) GraphInstantiateWithParams(g backend.Graph, flags uint64, upload Stream) (backend.GraphExec, backend.InstantiateInfo, error) {
	var x uintptr
	p := &instantiateParams{flags: flags, uploadStream: uintptr(upload)}
	err := r.call(fnGraphInstantiateWithParams, uintptr(unsafe.Pointer(&x)), uintptr(g), uintptr(unsafe.Pointer(p)))
	info := backend.InstantiateInfo{Result: backend.InstantiateResult(p.result), ErrorNode: backend.GraphNode(p.errNode)}
	runtime.KeepAlive(p)
	if err != nil && info.Result == backend.InstantiateSuccess {
		info.Result = backend.InstantiateError
	}
	return backend.GraphExec(x), info, err
}

// HasInstantiateWithParams reports whether the runtime has cudaGraphInstantiateWithParams.
func (r *Runtime) HasInstantiateWithParams() bool { return r.syms.has(fnGraphInstantiateWithParams) }

// GraphExecFlags is the flags x was instantiated with (cudaGraphExecGetFlags, 12.0+).
func (r *Runtime) GraphExecFlags(x backend.GraphExec) (uint64, error) {
	var f uint64
	err := r.call(fnGraphExecGetFlags, uintptr(x), uintptr(unsafe.Pointer(&f)))
	return f, err
}

// GraphDebugDotFlags writes g as DOT to path with the given detail flags
// (cudaGraphDebugDotPrint).
func (r *Runtime) GraphDebugDotFlags(g backend.Graph, path string, flags uint32) error {
	return r.call(fnGraphDebugDotPrint, uintptr(g), uintptr(unsafe.Pointer(cstr(path))), uintptr(flags))
}
