package cudart

import "github.com/gpuactor/gpuactor/internal/backend"

// Handle and value types shared with the backend interface.
type (
	DevicePtr = backend.DevicePtr // a device address (CUdeviceptr)
	Stream    = backend.Stream    // a cudaStream_t
	Event     = backend.Event     // a cudaEvent_t
	Dim3      = backend.Dim3      // a grid or block shape
	Attr      = backend.Attr      // a cudaDeviceAttr
	ImageKind = backend.ImageKind // PTX or cubin
)

// MemcpyKind is a cudaMemcpyKind.
type MemcpyKind int32

// Copy directions.
const (
	MemcpyHostToHost     MemcpyKind = 0
	MemcpyHostToDevice   MemcpyKind = 1
	MemcpyDeviceToHost   MemcpyKind = 2
	MemcpyDeviceToDevice MemcpyKind = 3
	MemcpyDefault        MemcpyKind = 4 // inferred from the pointers (unified addressing)
)
