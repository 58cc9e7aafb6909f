package cudart

import (
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// GraphMemTrim frees device ordinal's unused graph memory (cudaDeviceGraphMemTrim).
func (r *Runtime) GraphMemTrim(ordinal int) error {
	return r.call(fnDeviceGraphMemTrim, uintptr(ordinal))
}

// GraphMemAttribute reads a graph memory attribute of device ordinal, a cuuint64_t
// (cudaDeviceGetGraphMemAttribute).
func (r *Runtime) GraphMemAttribute(ordinal int, attr backend.GraphMemAttr) (uint64, error) {
	var v uint64
	err := r.call(fnDeviceGetGraphMemAttribute, uintptr(ordinal), uintptr(attr), uintptr(unsafe.Pointer(&v)))
	return v, err
}

// SetGraphMemAttribute sets a graph memory attribute of device ordinal
// (cudaDeviceSetGraphMemAttribute).
func (r *Runtime) SetGraphMemAttribute(ordinal int, attr backend.GraphMemAttr, value uint64) error {
	v := new(uint64)
	*v = value
	return r.call(fnDeviceSetGraphMemAttribute, uintptr(ordinal), uintptr(attr), uintptr(unsafe.Pointer(v)))
}
