package cudart

// Memcpy copies n bytes (cudaMemcpy). dst and src are addresses: device pointers, or host memory
// converted as uintptr(unsafe.Pointer(p)) inside the call expression, which (the method being
// uintptrescapes) keeps Go memory alive and in place for the call.
//
//go:uintptrescapes
func (r *Runtime) Memcpy(dst, src uintptr, n uint64, kind MemcpyKind) error {
	return r.call(fnMemcpy, dst, src, uintptr(n), uintptr(kind))
}

// MemcpyAsync enqueues a copy of n bytes on s (cudaMemcpyAsync); see Memcpy for dst and src.
// Host memory must be pinned (HostAlloc, HostRegister) for the copy to be asynchronous, and must
// stay valid until the copy completes; the call only keeps it alive while it runs.
//
//go:uintptrescapes
func (r *Runtime) MemcpyAsync(dst, src uintptr, n uint64, kind MemcpyKind, s Stream) error {
	f := getFrame()
	err := r.memcpyAsync(f, dst, src, n, kind, s)
	putFrame(f)
	return err
}

// Memset sets n bytes at p to the byte value (cudaMemset).
func (r *Runtime) Memset(p DevicePtr, value byte, n uint64) error {
	return r.call(fnMemset, uintptr(p), uintptr(value), uintptr(n))
}

// MemsetAsync enqueues setting n bytes at p to value on s (cudaMemsetAsync).
func (r *Runtime) MemsetAsync(p DevicePtr, value byte, n uint64, s Stream) error {
	f := getFrame()
	err := r.memsetAsync(f, p, value, n, s)
	putFrame(f)
	return err
}
