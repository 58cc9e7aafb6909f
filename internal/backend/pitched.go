package backend

import "unsafe"

// PitchedDevice is pitched (2D) device memory: rows of width bytes, pitch bytes apart, as
// cudaMallocPitch lays them out. A 3D allocation is one of height×depth rows, as
// cudaMalloc3D's is, so a box of whole rows is a 2D copy and a sub-box one per slice.
type PitchedDevice interface {
	// MallocPitch allocates height rows of at least width bytes each and returns the address
	// and the pitch (the rows' stride, width rounded up to the device's alignment). Free
	// releases it.
	MallocPitch(width, height uint64) (DevicePtr, uint64, error)
	// Copy2DDtoD copies height rows of width bytes from src (rows spitch apart) to dst (rows
	// dpitch apart), ordered on s.
	//remote:posted
	Copy2DDtoD(dst DevicePtr, dpitch uint64, src DevicePtr, spitch, width, height uint64, s Stream) error
	// Copy2DHtoD copies height rows of width bytes from host memory at src (rows spitch
	// apart) to dst (rows dpitch apart), ordered on s.
	//remote:posted
	Copy2DHtoD(dst DevicePtr, dpitch uint64, src unsafe.Pointer, spitch, width, height uint64, s Stream) error
	// Copy2DDtoH copies height rows of width bytes from src (rows spitch apart) to host memory
	// at dst (rows dpitch apart), ordered on s.
	//remote:posted
	Copy2DDtoH(dst unsafe.Pointer, dpitch uint64, src DevicePtr, spitch, width, height uint64, s Stream) error
	// Memset2D sets width bytes of each of height rows at p (pitch apart) to value, ordered
	// on s.
	//remote:posted
	Memset2D(p DevicePtr, pitch uint64, value byte, width, height uint64, s Stream) error
}
