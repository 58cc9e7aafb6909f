package cudart

import "unsafe"

// Pos is a struct cudaPos: a position in a 3D object. X is in elements of the copy's array on
// both sides when an array takes part (the runtime scales linear memory's X by the array's
// element size too), in bytes for linear memory otherwise.
type Pos struct{ X, Y, Z uint64 }

// Extent is a struct cudaExtent: a 3D size (width in bytes for linear memory).
type Extent struct{ Width, Height, Depth uint64 }

// PitchedPtr is a struct cudaPitchedPtr: pitched linear memory, host or device.
type PitchedPtr struct {
	Ptr   uintptr
	Pitch uint64
	XSize uint64 // logical width, in elements
	YSize uint64 // logical height, in elements
}

// Memcpy3DParms is a struct cudaMemcpy3DParms, laid out as the CUDA 11.x to 13.0 headers lay
// it out (160 bytes on 64-bit hosts). Arrays (SrcArray, DstArray) are cudaArray_t handles;
// zero where the side is pitched memory.
type Memcpy3DParms struct {
	SrcArray uintptr
	SrcPos   Pos
	SrcPtr   PitchedPtr
	DstArray uintptr
	DstPos   Pos
	DstPtr   PitchedPtr
	Extent   Extent
	Kind     MemcpyKind
	_        int32
}

// Memcpy3DAsync enqueues the 3D copy p describes on s (cudaMemcpy3DAsync). Host memory p
// names must be C's or pinned, and stay valid until the copy completes.
func (r *Runtime) Memcpy3DAsync(p *Memcpy3DParms, s Stream) error {
	return r.call(fnMemcpy3DAsync, uintptr(unsafe.Pointer(p)), uintptr(s))
}
