package cudart

import "unsafe"

// HostGetFlags is the flags pinned host memory at p was allocated with (cudaHostGetFlags).
func (r *Runtime) HostGetFlags(p unsafe.Pointer) (uint32, error) {
	var flags uint32 // unsigned int
	if err := r.call(fnHostGetFlags, uintptr(unsafe.Pointer(&flags)), uintptr(p)); err != nil {
		return 0, err
	}
	return flags, nil
}

// HostGetFlags is the flags of pinned host memory at p.
func (d *device) HostGetFlags(p unsafe.Pointer) (uint32, error) { return d.rt.HostGetFlags(p) }
