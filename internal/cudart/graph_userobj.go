package cudart

import (
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// User objects. The destructor is a cudaHostFn_t: the process's host-function trampoline
// (hostfunc.go) with the one-shot handle of the Go function, which the runtime calls exactly
// once, on its internal thread, when the last reference goes.

const (
	userObjectNoDestructorSync = 1 // cudaUserObjectNoDestructorSync: required by every runtime so far
	graphUserObjectMove        = 1 // cudaGraphUserObjectMove
)

// UserObjectCreate makes a user object with one reference whose destructor runs destroy
// (cudaUserObjectCreate).
func (r *Runtime) UserObjectCreate(destroy func()) (backend.UserObject, error) {
	if destroy == nil {
		return 0, r.newError("cudaUserObjectCreate", codeInvalidValue)
	}
	h := hostFuncs.put(destroy)
	var o uintptr
	err := r.call(fnUserObjectCreate, uintptr(unsafe.Pointer(&o)), h, hostFuncTrampoline(), 1, userObjectNoDestructorSync)
	if err != nil {
		hostFuncs.take(h) // never created: forget it
		return 0, err
	}
	return backend.UserObject(o), nil
}

// UserObjectRetain adds count references (cudaUserObjectRetain).
func (r *Runtime) UserObjectRetain(o backend.UserObject, count uint32) error {
	return r.call(fnUserObjectRetain, uintptr(o), uintptr(count))
}

// UserObjectRelease drops count references (cudaUserObjectRelease).
func (r *Runtime) UserObjectRelease(o backend.UserObject, count uint32) error {
	return r.call(fnUserObjectRelease, uintptr(o), uintptr(count))
}

// GraphRetainUserObject gives g count references to o, the caller's when move
// (cudaGraphRetainUserObject).
func (r *Runtime) GraphRetainUserObject(g backend.Graph, o backend.UserObject, count uint32, move bool) error {
	flags := uintptr(0)
	if move {
		flags = graphUserObjectMove
	}
	return r.call(fnGraphRetainUserObject, uintptr(g), uintptr(o), uintptr(count), flags)
}

// GraphReleaseUserObject drops count of g's references to o (cudaGraphReleaseUserObject).
func (r *Runtime) GraphReleaseUserObject(g backend.Graph, o backend.UserObject, count uint32) error {
	return r.call(fnGraphReleaseUserObject, uintptr(g), uintptr(o), uintptr(count))
}
