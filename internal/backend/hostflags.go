package backend

import "unsafe"

// HostMemoryFlags is the host-memory query part of the runtime API.
type HostMemoryFlags interface {
	// HostGetFlags is the HostAlloc* flags pinned host memory at p was allocated with
	// (cudaHostGetFlags). Memory not from HostAlloc is cudaerr.InvalidValue.
	HostGetFlags(p unsafe.Pointer) (uint32, error)
}
