package cudart

import "unsafe"

// Malloc allocates size bytes on the current device (cudaMalloc).
func (r *Runtime) Malloc(size uint64) (DevicePtr, error) {
	var p uintptr
	if err := r.call(fnMalloc, uintptr(unsafe.Pointer(&p)), uintptr(size)); err != nil {
		return 0, err
	}
	return DevicePtr(p), nil
}

// Free releases device memory from Malloc (cudaFree).
func (r *Runtime) Free(p DevicePtr) error { return r.call(fnFree, uintptr(p)) }

// HostAlloc allocates size bytes of page-locked host memory (cudaHostAlloc; flags:
// backend.HostAlloc*). The memory is C's: Go's garbage collector neither scans nor frees it.
func (r *Runtime) HostAlloc(size uint64, flags uint32) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	if err := r.call(fnHostAlloc, uintptr(unsafe.Pointer(&p)), uintptr(size), uintptr(flags)); err != nil {
		return nil, err
	}
	return p, nil
}

// FreeHost releases memory from HostAlloc (cudaFreeHost).
func (r *Runtime) FreeHost(p unsafe.Pointer) error { return r.call(fnFreeHost, uintptr(p)) }

// HostRegister page-locks size bytes of existing host memory at p (cudaHostRegister; flags:
// backend.HostRegister*). Go memory registered this way must stay reachable (and, for stack
// memory, pinned with runtime.Pinner) until HostUnregister.
func (r *Runtime) HostRegister(p unsafe.Pointer, size uint64, flags uint32) error {
	return r.call(fnHostRegister, uintptr(p), uintptr(size), uintptr(flags))
}

// HostUnregister undoes HostRegister (cudaHostUnregister).
func (r *Runtime) HostUnregister(p unsafe.Pointer) error {
	return r.call(fnHostUnregister, uintptr(p))
}
