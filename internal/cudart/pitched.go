package cudart

import "unsafe"

// MallocPitch allocates height rows of at least width bytes (cudaMallocPitch) and returns the
// address and the pitch the runtime chose.
func (r *Runtime) MallocPitch(width, height uint64) (DevicePtr, uint64, error) {
	var p, pitch uintptr
	if err := r.call(fnMallocPitch, uintptr(unsafe.Pointer(&p)), uintptr(unsafe.Pointer(&pitch)), uintptr(width), uintptr(height)); err != nil {
		return 0, 0, err
	}
	return DevicePtr(p), uint64(pitch), nil
}

// Memcpy2DAsync enqueues a copy of height rows of width bytes on s (cudaMemcpy2DAsync);
// dst and src are addresses as for Memcpy, their rows dpitch and spitch bytes apart.
//
//go:uintptrescapes
func (r *Runtime) Memcpy2DAsync(dst uintptr, dpitch uint64, src uintptr, spitch, width, height uint64, kind MemcpyKind, s Stream) error {
	return r.call(fnMemcpy2DAsync, dst, uintptr(dpitch), src, uintptr(spitch), uintptr(width), uintptr(height), uintptr(kind), uintptr(s))
}

// Memset2DAsync enqueues setting width bytes of each of height rows at p (pitch bytes apart)
// to value on s (cudaMemset2DAsync; value is a C int of which the runtime uses the low byte).
func (r *Runtime) Memset2DAsync(p DevicePtr, pitch uint64, value byte, width, height uint64, s Stream) error {
	return r.call(fnMemset2DAsync, uintptr(p), uintptr(pitch), uintptr(value), uintptr(width), uintptr(height), uintptr(s))
}
