package cuda

import "fmt"

// DevicePtr is an address in a device's memory space (a CUdeviceptr). Kernels take it as a
// pointer argument.
type DevicePtr uintptr

// Dim3 is a grid or block shape: extents in x, y and z.
type Dim3 struct{ X, Y, Z uint32 }

// Dim builds a Dim3 from up to three extents; the missing ones are 1.
func Dim(xyz ...uint32) Dim3 {
	d := Dim3{X: 1, Y: 1, Z: 1}
	if len(xyz) > 0 {
		d.X = xyz[0]
	}
	if len(xyz) > 1 {
		d.Y = xyz[1]
	}
	if len(xyz) > 2 {
		d.Z = xyz[2]
	}
	return d
}

// Count is the number of threads or blocks the shape covers.
func (d Dim3) Count() uint64 { return uint64(d.X) * uint64(d.Y) * uint64(d.Z) }

// String is "(x, y, z)".
func (d Dim3) String() string { return fmt.Sprintf("(%d, %d, %d)", d.X, d.Y, d.Z) }

// LaunchConfig is a kernel launch's shape and, beyond it, the launch attributes CUDA takes
// through cudaLaunchKernelExC. A config with only Grid, Block and SharedMem set launches the
// plain way; any other field set makes it an extended launch.
type LaunchConfig struct {
	Grid  Dim3 // blocks
	Block Dim3 // threads per block
	// SharedMem is the dynamic shared memory per block, in bytes. Above the device's default
	// per-block limit (48 KiB) gpuactor raises the kernel's limit itself
	// (cudaFuncAttributeMaxDynamicSharedMemorySize), up to the device's opt-in limit.
	SharedMem uint32

	// Cooperative launches a cooperative kernel (cudaLaunchAttributeCooperative), whose blocks
	// may synchronize grid-wide (cooperative_groups::this_grid().sync()). Every block of the
	// grid must be resident at once: a larger grid is refused before it reaches the device.
	Cooperative bool
	// Cluster is the thread block cluster shape in blocks (cudaLaunchAttributeClusterDimension,
	// compute capability 9.0 and later); the zero value launches without clusters. Each extent
	// must divide the grid's, and the cluster may hold at most 8 blocks, or 16 for a kernel
	// that allows non-portable cluster sizes (Kernel.SetNonPortableClusterSizeAllowed).
	Cluster Dim3
	// ClusterScheduling is the cluster scheduling policy preference
	// (cudaLaunchAttributeClusterSchedulingPolicyPreference); needs Cluster.
	ClusterScheduling ClusterSchedulingPolicy
	// Priority is the launch's execution priority (cudaLaunchAttributePriority), within the
	// device's stream priority range (lower is higher priority); 0 keeps the stream's.
	Priority int
	// ProgrammaticSerialization lets this kernel start before the previous kernel of its
	// stream has finished (cudaLaunchAttributeProgrammaticStreamSerialization, programmatic
	// dependent launch): the kernel must wait for the earlier one's results itself
	// (cudaGridDependencySynchronize).
	ProgrammaticSerialization bool
	// MemSyncDomain is the memory synchronization domain the kernel runs in
	// (cudaLaunchAttributeMemSyncDomain).
	MemSyncDomain MemSyncDomain
}

// Extended reports whether the config carries a launch attribute beyond its shape, and so
// launches through cudaLaunchKernelExC.
func (c LaunchConfig) Extended() bool {
	return c.Cooperative || c.Cluster != (Dim3{}) || c.ClusterScheduling != 0 || c.Priority != 0 ||
		c.ProgrammaticSerialization || c.MemSyncDomain != 0
}

// ArgKind is the type of one kernel argument, as gpuactor checks it against the kernel's
// signature.
type ArgKind uint8

// Kernel argument kinds.
const (
	Int32 ArgKind = iota + 1
	Uint32
	Int64
	Uint64
	Float32
	Float64
	Pointer
	Texture // a cudaTextureObject_t (TextureObject)
	Surface // a cudaSurfaceObject_t (SurfaceObject)
)

// Size is the argument's size in bytes as the kernel receives it.
func (k ArgKind) Size() int {
	switch k {
	case Int32, Uint32, Float32:
		return 4
	case Int64, Uint64, Float64, Pointer, Texture, Surface:
		return 8
	}
	return 0
}

// String names the kind: "int32", "float64", "pointer"…
func (k ArgKind) String() string {
	switch k {
	case Int32:
		return "int32"
	case Uint32:
		return "uint32"
	case Int64:
		return "int64"
	case Uint64:
		return "uint64"
	case Float32:
		return "float32"
	case Float64:
		return "float64"
	case Pointer:
		return "pointer"
	case Texture:
		return "texture object"
	case Surface:
		return "surface object"
	}
	return "invalid"
}

// Arg is one kernel argument as a launch carries it: its kind and its bits (little-endian, in
// the low Size() bytes; floats as their IEEE bits, pointers as the DevicePtr value).
type Arg struct {
	Kind ArgKind
	Bits uint64
}

// Numeric is the element types typed device memory holds and the typed copies move: the
// integer and floating-point kinds, and types defined over them.
type Numeric interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~int |
		~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uint | ~uintptr |
		~float32 | ~float64
}
