package backend

import "github.com/gpuactor/gpuactor/cuda"

// LaunchAttrs are the launch attributes a launch carries beyond its shape
// (cudaLaunchAttribute values of cudaLaunchKernelExC). The zero value is a plain launch.
type LaunchAttrs struct {
	Cooperative               bool
	Cluster                   Dim3  // zero: no cluster
	ClusterScheduling         uint8 // cudaClusterSchedulingPolicy; 0: none given
	Priority                  int32 // 0: the stream's
	ProgrammaticSerialization bool
	MemSyncDomain             uint8 // cudaLaunchMemSyncDomain
	// ProgrammaticEvent, when not 0, is recorded once every block of the kernel has triggered
	// programmatic completion or finished (cudaLaunchAttributeProgrammaticEvent).
	ProgrammaticEvent Event
}

// FuncAttributes are a kernel's attributes (cudaFuncAttributes).
type FuncAttributes = cuda.KernelAttributes

// FuncAttr is a settable kernel attribute (cudaFuncAttribute).
type FuncAttr int32

// Settable kernel attributes (cudaFuncAttribute; the driver's CUfunction_attribute has the
// same values).
const (
	FuncAttrMaxDynamicSharedMemorySize    FuncAttr = 8
	FuncAttrPreferredSharedMemoryCarveout FuncAttr = 9
	FuncAttrClusterDimMustBeSet           FuncAttr = 10 // read only
	FuncAttrRequiredClusterWidth          FuncAttr = 11
	FuncAttrRequiredClusterHeight         FuncAttr = 12
	FuncAttrRequiredClusterDepth          FuncAttr = 13
	FuncAttrNonPortableClusterSizeAllowed FuncAttr = 14
	FuncAttrClusterSchedulingPolicy       FuncAttr = 15
)

// Occupancy flags (cudaOccupancy*).
const (
	OccupancyDefault                uint32 = 0
	OccupancyDisableCachingOverride uint32 = 1
)

// LaunchControl is the execution control and occupancy part of the runtime API (cudaFunc*,
// cudaLaunchKernelExC, cudaOccupancy*), scoped to one device and called from its actor's
// thread only.
type LaunchControl interface {
	// FuncAttributes reads k's attributes (cudaFuncGetAttributes).
	FuncAttributes(k Kernel) (FuncAttributes, error)
	// FuncSetAttribute sets one of k's attributes (cudaFuncSetAttribute).
	FuncSetAttribute(k Kernel, attr FuncAttr, value int) error
	// FuncSetCacheConfig sets k's preferred cache configuration (cudaFuncSetCacheConfig).
	FuncSetCacheConfig(k Kernel, c uint8) error
	// FuncName is k's name as the runtime has it (cudaFuncGetName; mangled for C++ kernels).
	FuncName(k Kernel) (string, error)
	// FuncParamSizes lists the sizes in bytes of k's parameters, as the image describes them
	// (cudaFuncGetParamInfo, 12.4+); cudaerr.NotSupported where the runtime cannot say.
	FuncParamSizes(k Kernel) ([]uint64, error)
	// LaunchEx enqueues k on s with launch attributes (cudaLaunchKernelExC). Like Launch it
	// does not check args against the kernel's parameters.
	//remote:posted
	LaunchEx(k Kernel, grid, block Dim3, sharedMem uint32, s Stream, args []Arg, attrs LaunchAttrs) error
	// OccupancyAvailableDynamicSMemPerBlock is the most dynamic shared memory a block of k may
	// use when numBlocks blocks of blockSize threads share a multiprocessor
	// (cudaOccupancyAvailableDynamicSMemPerBlock).
	OccupancyAvailableDynamicSMemPerBlock(k Kernel, numBlocks, blockSize int) (uint64, error)
	// OccupancyMaxPotentialClusterSize is the largest cluster of k's blocks the device can
	// schedule for this launch shape (cudaOccupancyMaxPotentialClusterSize); attrs.Cluster is
	// ignored, the other attributes count.
	OccupancyMaxPotentialClusterSize(k Kernel, grid, block Dim3, sharedMem uint32, attrs LaunchAttrs) (int, error)
	// OccupancyMaxActiveClusters is how many clusters of attrs.Cluster blocks of k can be
	// resident at once (cudaOccupancyMaxActiveClusters).
	OccupancyMaxActiveClusters(k Kernel, grid, block Dim3, sharedMem uint32, attrs LaunchAttrs) (int, error)
}
