package textures

import (
	"unsafe"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// ResourceType is what a texture or surface reads (cudaResourceType).
type ResourceType int32

// Resource types (values as in the runtime).
const (
	ArrayResource     ResourceType = ResourceType(backend.ResourceArray)
	MipmappedResource ResourceType = ResourceType(backend.ResourceMipmapped)
	LinearResource    ResourceType = ResourceType(backend.ResourceLinear)
	Pitch2DResource   ResourceType = ResourceType(backend.ResourcePitch2D)
)

// Resource is what a texture or surface reads (cudaResourceDesc): build it with FromLinear,
// FromPitched, or from a CUDA array.
type Resource struct {
	desc  backend.ResourceDesc
	mem   device.Mem
	held  core.Holder
	flags uint32 // an array's flags (alloc.ArrayFlags)
	err   error  // why the resource cannot be used, found when it was built
}

// FromLinear is linear device memory m (a buffer or a slice of one) read as elements of
// format f: a texture kernels fetch with tex1Dfetch(t, i), no filtering or addressing, an
// index past the end reading zero. m must start at an allocation's start (the device's texture
// alignment) and hold at most textures.MaxLinearWidth elements.
func FromLinear(m device.Mem, f cuda.ChannelFormat) Resource {
	r := Resource{desc: backend.ResourceDesc{Type: backend.ResourceLinear, Format: f}, mem: m}
	if m == nil {
		r.err = invalid("FromLinear of nil memory")
	}
	return r
}

// FromPitched is the 2D pitched array p (from alloc.MallocPitch) read as elements of format f,
// whose size must be T's: a texture kernels sample with tex2D. A 3D array (alloc.Malloc3D) is
// read as one 2D image of Height×Depth rows. Its pitch must be a multiple of the device's
// texture pitch alignment, which cudaMallocPitch's pitches are.
func FromPitched[T any](p *alloc.Pitched[T], f cuda.ChannelFormat) Resource {
	if p == nil || p.Buffer == nil {
		return Resource{err: invalid("FromPitched of a nil pitched array")}
	}
	var zero T
	r := Resource{desc: backend.ResourceDesc{Type: backend.ResourcePitch2D, Format: f,
		Width: uint64(p.Width()), Height: uint64(p.Height() * p.Depth()), Pitch: p.Pitch()}, mem: p.Buffer}
	if f.Validate() == nil && f.Size() != uint64(unsafe.Sizeof(zero)) {
		r.err = invalid("FromPitched: format %s has %d-byte elements, the array's are %d bytes", f, f.Size(), unsafe.Sizeof(zero))
	}
	return r
}

// Type is the resource's type.
func (r Resource) Type() ResourceType { return ResourceType(r.desc.Type) }

// ResourceDesc is a resource as the runtime describes it back (cudaGetTextureObjectResourceDesc
// and cudaGetSurfaceObjectResourceDesc): its type, and for linear and pitch2D memory its
// address, format and extents.
type ResourceDesc struct {
	Type   ResourceType
	Ptr    cuda.DevicePtr     // linear, pitch2D
	Format cuda.ChannelFormat // linear, pitch2D
	Size   uint64             // linear: bytes
	Width  uint64             // pitch2D: elements of a row
	Height uint64             // pitch2D: rows
	Pitch  uint64             // pitch2D: bytes between rows
}

func resourceDescOf(b backend.ResourceDesc) ResourceDesc {
	return ResourceDesc{Type: ResourceType(b.Type), Ptr: b.Ptr, Format: b.Format, Size: b.Size, Width: b.Width, Height: b.Height, Pitch: b.Pitch}
}

func (r Resource) object() (core.ObjectResource, error) {
	if r.err != nil {
		return core.ObjectResource{}, r.err
	}
	if r.mem == nil && r.held == nil {
		return core.ObjectResource{}, invalid("an empty Resource: build one with FromLinear, FromPitched or from an array")
	}
	return core.ObjectResource{Desc: r.desc, Mem: r.mem, Held: r.held}, nil
}

// owner is the device the resource lives on.
func (r Resource) owner() (*core.Device, error) {
	if r.mem != nil {
		return core.Owner("texture resource", r.mem)
	}
	return nil, nil
}
