package cudart

import (
	"runtime"
	"unsafe"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// CUDA arrays (cudaMallocArray and its family). cudaChannelFormatDesc is five C ints, as
// cuda.ChannelFormat is, so a *cuda.ChannelFormat is passed as the descriptor. Two calls take
// a struct cudaExtent (24 bytes) by value: on amd64 (SysV MEMORY class) it travels as 3 stack
// words after the integer registers, which the other arguments and zeros fill; on arm64
// (AAPCS64) a composite over 16 bytes is copied by the caller and passed by address.

// byValueArgs is, on amd64, the argument words of a call whose integer arguments are regs
// (at most 6) and whose by-value structs of over 16 bytes are structs, each as its words:
// the registers first, zero-filled, then the structs' words on the stack in order.
func byValueArgs(regs []uintptr, structs ...[]uintptr) []uintptr {
	if runtime.GOARCH == "amd64" {
		out := make([]uintptr, 6, 6+3*len(structs))
		copy(out, regs)
		for _, s := range structs {
			out = append(out, s...)
		}
		return out
	}
	panic("cudart: byValueArgs is the amd64 convention")
}

// MallocArray allocates a 1D or 2D array (cudaMallocArray).
func (r *Runtime) MallocArray(f cuda.ChannelFormat, width, height uint64, flags uint32) (backend.Array, error) {
	var a uintptr
	err := r.call(fnMallocArray, uintptr(unsafe.Pointer(&a)), uintptr(unsafe.Pointer(&f)), uintptr(width), uintptr(height), uintptr(flags))
	return backend.Array(a), err
}

// Malloc3DArray allocates an array of any shape (cudaMalloc3DArray).
func (r *Runtime) Malloc3DArray(f cuda.ChannelFormat, e Extent, flags uint32) (backend.Array, error) {
	var a uintptr
	pa, pf := uintptr(unsafe.Pointer(&a)), uintptr(unsafe.Pointer(&f))
	var err error
	if runtime.GOARCH == "amd64" {
		err = r.call(fnMalloc3DArray, byValueArgs([]uintptr{pa, pf, uintptr(flags)}, []uintptr{uintptr(e.Width), uintptr(e.Height), uintptr(e.Depth)})...)
	} else {
		c := e
		err = r.call(fnMalloc3DArray, pa, pf, uintptr(unsafe.Pointer(&c)), uintptr(flags))
	}
	return backend.Array(a), err
}

// FreeArray frees an array (cudaFreeArray).
func (r *Runtime) FreeArray(a backend.Array) error { return r.call(fnFreeArray, uintptr(a)) }

// ArrayGetInfo describes an array (cudaArrayGetInfo).
func (r *Runtime) ArrayGetInfo(a backend.Array) (cuda.ChannelFormat, Extent, uint32, error) {
	var f cuda.ChannelFormat
	var e Extent
	var flags uint32
	err := r.call(fnArrayGetInfo, uintptr(unsafe.Pointer(&f)), uintptr(unsafe.Pointer(&e)), uintptr(unsafe.Pointer(&flags)), uintptr(a))
	return f, e, flags, err
}

// GetChannelDesc is an array's format (cudaGetChannelDesc).
func (r *Runtime) GetChannelDesc(a backend.Array) (cuda.ChannelFormat, error) {
	var f cuda.ChannelFormat
	err := r.call(fnGetChannelDesc, uintptr(unsafe.Pointer(&f)), uintptr(a))
	return f, err
}

// ArrayGetPlane is plane i of a multi-planar array (cudaArrayGetPlane).
func (r *Runtime) ArrayGetPlane(a backend.Array, plane uint32) (backend.Array, error) {
	var p uintptr
	err := r.call(fnArrayGetPlane, uintptr(unsafe.Pointer(&p)), uintptr(a), uintptr(plane))
	return backend.Array(p), err
}

// MallocMipmappedArray allocates a mipmapped array (cudaMallocMipmappedArray).
func (r *Runtime) MallocMipmappedArray(f cuda.ChannelFormat, e Extent, levels, flags uint32) (backend.MipmappedArray, error) {
	var m uintptr
	pm, pf := uintptr(unsafe.Pointer(&m)), uintptr(unsafe.Pointer(&f))
	var err error
	if runtime.GOARCH == "amd64" {
		err = r.call(fnMallocMipmappedArray, byValueArgs([]uintptr{pm, pf, uintptr(levels), uintptr(flags)}, []uintptr{uintptr(e.Width), uintptr(e.Height), uintptr(e.Depth)})...)
	} else {
		c := e
		err = r.call(fnMallocMipmappedArray, pm, pf, uintptr(unsafe.Pointer(&c)), uintptr(levels), uintptr(flags))
	}
	return backend.MipmappedArray(m), err
}

// GetMipmappedArrayLevel is one level of a mipmapped array (cudaGetMipmappedArrayLevel).
func (r *Runtime) GetMipmappedArrayLevel(m backend.MipmappedArray, level uint32) (backend.Array, error) {
	var a uintptr
	err := r.call(fnGetMipmappedArrayLevel, uintptr(unsafe.Pointer(&a)), uintptr(m), uintptr(level))
	return backend.Array(a), err
}

// FreeMipmappedArray frees a mipmapped array (cudaFreeMipmappedArray).
func (r *Runtime) FreeMipmappedArray(m backend.MipmappedArray) error {
	return r.call(fnFreeMipmappedArray, uintptr(m))
}

// arrayMemoryRequirements is a struct cudaArrayMemoryRequirements.
type arrayMemoryRequirements struct {
	size, alignment uint64
	_               [4]uint32
}

// ArrayGetMemoryRequirements is what a deferred-mapping array needs on device ordinal
// (cudaArrayGetMemoryRequirements).
func (r *Runtime) ArrayGetMemoryRequirements(a backend.Array, ordinal int) (backend.ArrayMemoryRequirements, error) {
	var m arrayMemoryRequirements
	err := r.call(fnArrayGetMemoryRequirements, uintptr(unsafe.Pointer(&m)), uintptr(a), uintptr(ordinal))
	return backend.ArrayMemoryRequirements{Size: m.size, Alignment: m.alignment}, err
}

// MipmappedArrayGetMemoryRequirements is ArrayGetMemoryRequirements of a mipmapped array
// (cudaMipmappedArrayGetMemoryRequirements).
func (r *Runtime) MipmappedArrayGetMemoryRequirements(m backend.MipmappedArray, ordinal int) (backend.ArrayMemoryRequirements, error) {
	var q arrayMemoryRequirements
	err := r.call(fnMipmappedArrayGetMemoryRequirements, uintptr(unsafe.Pointer(&q)), uintptr(m), uintptr(ordinal))
	return backend.ArrayMemoryRequirements{Size: q.size, Alignment: q.alignment}, err
}

// arraySparseProperties is a struct cudaArraySparseProperties (48 bytes: the 64-bit mip
// tail size is 8-aligned at offset 16).
type arraySparseProperties struct {
	tileWidth, tileHeight, tileDepth uint32
	miptailFirstLevel                uint32
	miptailSize                      uint64
	flags                            uint32
	_                                [4]uint32
}

func (p *arraySparseProperties) out() backend.ArraySparseProperties {
	return backend.ArraySparseProperties{TileWidth: p.tileWidth, TileHeight: p.tileHeight, TileDepth: p.tileDepth,
		MiptailFirstLevel: p.miptailFirstLevel, MiptailSize: p.miptailSize, Flags: p.flags}
}

// ArrayGetSparseProperties is a sparse array's tile layout (cudaArrayGetSparseProperties).
func (r *Runtime) ArrayGetSparseProperties(a backend.Array) (backend.ArraySparseProperties, error) {
	var p arraySparseProperties
	err := r.call(fnArrayGetSparseProperties, uintptr(unsafe.Pointer(&p)), uintptr(a))
	return p.out(), err
}

// MipmappedArrayGetSparseProperties is a sparse mipmapped array's tile layout
// (cudaMipmappedArrayGetSparseProperties).
func (r *Runtime) MipmappedArrayGetSparseProperties(m backend.MipmappedArray) (backend.ArraySparseProperties, error) {
	var p arraySparseProperties
	err := r.call(fnMipmappedArrayGetSparseProperties, uintptr(unsafe.Pointer(&p)), uintptr(m))
	return p.out(), err
}

// Memcpy3DPeerParms is a struct cudaMemcpy3DPeerParms (168 bytes on 64-bit hosts).
type Memcpy3DPeerParms struct {
	SrcArray  uintptr
	SrcPos    Pos
	SrcPtr    PitchedPtr
	SrcDevice int32
	_         int32
	DstArray  uintptr
	DstPos    Pos
	DstPtr    PitchedPtr
	DstDevice int32
	_         int32
	Extent    Extent
}

// Memcpy3DPeerAsync enqueues the copy between devices p describes on s
// (cudaMemcpy3DPeerAsync).
func (r *Runtime) Memcpy3DPeerAsync(p *Memcpy3DPeerParms, s Stream) error {
	return r.call(fnMemcpy3DPeerAsync, uintptr(unsafe.Pointer(p)), uintptr(s))
}

// Memcpy2DToArrayAsync enqueues a copy of height rows of width bytes from src (rows spitch
// apart) into a at byte column wOffset, row hOffset (cudaMemcpy2DToArrayAsync).
//
//go:uintptrescapes
func (r *Runtime) Memcpy2DToArrayAsync(a backend.Array, wOffset, hOffset uint64, src uintptr, spitch, width, height uint64, kind MemcpyKind, s Stream) error {
	return r.call(fnMemcpy2DToArrayAsync, uintptr(a), uintptr(wOffset), uintptr(hOffset), src, uintptr(spitch), uintptr(width), uintptr(height), uintptr(kind), uintptr(s))
}

// Memcpy2DFromArrayAsync enqueues a copy of height rows of width bytes from a at byte
// column wOffset, row hOffset to dst (rows dpitch apart) (cudaMemcpy2DFromArrayAsync).
//
//go:uintptrescapes
func (r *Runtime) Memcpy2DFromArrayAsync(dst uintptr, dpitch uint64, a backend.Array, wOffset, hOffset, width, height uint64, kind MemcpyKind, s Stream) error {
	return r.call(fnMemcpy2DFromArrayAsync, dst, uintptr(dpitch), uintptr(a), uintptr(wOffset), uintptr(hOffset), uintptr(width), uintptr(height), uintptr(kind), uintptr(s))
}

// Memset3DAsync enqueues setting extent (width in bytes) of the pitched memory p to value on
// s (cudaMemset3DAsync, which takes both structs by value).
func (r *Runtime) Memset3DAsync(p PitchedPtr, value byte, e Extent, s Stream) error {
	if runtime.GOARCH == "amd64" {
		return r.call(fnMemset3DAsync, byValueArgs([]uintptr{uintptr(value), uintptr(s)},
			[]uintptr{p.Ptr, uintptr(p.Pitch), uintptr(p.XSize), uintptr(p.YSize)},
			[]uintptr{uintptr(e.Width), uintptr(e.Height), uintptr(e.Depth)})...)
	}
	pc, ec := p, e
	return r.call(fnMemset3DAsync, uintptr(unsafe.Pointer(&pc)), uintptr(value), uintptr(unsafe.Pointer(&ec)), uintptr(s))
}
