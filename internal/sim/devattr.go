package sim

import "github.com/gpuactor/gpuactor/internal/backend"

// moreAttrs are the device attributes the simulator models beyond those its kernels and
// properties use, so that every cudaDeviceAttr of CUDA 13.0 has an answer: an H100 SXM's values
// where the attribute describes hardware, and "no" for features the simulator does not model
// (NUMA placement, MPS, graphics interop, remote-write flushing by the device itself).
func moreAttrs(ordinal int, l2 int) map[backend.Attr]int {
	return map[backend.Attr]int{
		45:  32768,      // cudaDevAttrMaxTexture2DGatherWidth
		46:  32768,      // cudaDevAttrMaxTexture2DGatherHeight
		47:  8192,       // cudaDevAttrMaxTexture3DWidthAlt
		48:  8192,       // cudaDevAttrMaxTexture3DHeightAlt
		49:  32768,      // cudaDevAttrMaxTexture3DDepthAlt
		51:  32,         // cudaDevAttrTexturePitchAlignment
		52:  32768,      // cudaDevAttrMaxTextureCubemapWidth
		53:  32768,      // cudaDevAttrMaxTextureCubemapLayeredWidth
		54:  2046,       // cudaDevAttrMaxTextureCubemapLayeredLayers
		55:  32768,      // cudaDevAttrMaxSurface1DWidth
		56:  131072,     // cudaDevAttrMaxSurface2DWidth
		57:  65536,      // cudaDevAttrMaxSurface2DHeight
		58:  16384,      // cudaDevAttrMaxSurface3DWidth
		59:  16384,      // cudaDevAttrMaxSurface3DHeight
		60:  16384,      // cudaDevAttrMaxSurface3DDepth
		61:  32768,      // cudaDevAttrMaxSurface1DLayeredWidth
		62:  2048,       // cudaDevAttrMaxSurface1DLayeredLayers
		63:  32768,      // cudaDevAttrMaxSurface2DLayeredWidth
		64:  32768,      // cudaDevAttrMaxSurface2DLayeredHeight
		65:  2048,       // cudaDevAttrMaxSurface2DLayeredLayers
		66:  32768,      // cudaDevAttrMaxSurfaceCubemapWidth
		67:  32768,      // cudaDevAttrMaxSurfaceCubemapLayeredWidth
		68:  2046,       // cudaDevAttrMaxSurfaceCubemapLayeredLayers
		69:  1 << 28,    // cudaDevAttrMaxTexture1DLinearWidth
		70:  131072,     // cudaDevAttrMaxTexture2DLinearWidth
		71:  65000,      // cudaDevAttrMaxTexture2DLinearHeight
		72:  2097120,    // cudaDevAttrMaxTexture2DLinearPitch
		73:  32768,      // cudaDevAttrMaxTexture2DMipmappedWidth
		74:  32768,      // cudaDevAttrMaxTexture2DMipmappedHeight
		77:  32768,      // cudaDevAttrMaxTexture1DMipmappedWidth
		79:  1,          // cudaDevAttrGlobalL1CacheSupported
		80:  1,          // cudaDevAttrLocalL1CacheSupported
		82:  64 << 10,   // cudaDevAttrMaxRegistersPerMultiprocessor
		85:  ordinal,    // cudaDevAttrMultiGpuBoardGroupID: each device is a board of its own
		86:  0,          // cudaDevAttrHostNativeAtomicSupported
		87:  2,          // cudaDevAttrSingleToDoublePrecisionPerfRatio
		88:  0,          // cudaDevAttrPageableMemoryAccess
		91:  0,          // cudaDevAttrCanUseHostPointerForRegisteredMem
		98:  0,          // cudaDevAttrCanFlushRemoteWrites
		99:  1,          // cudaDevAttrHostRegisterSupported
		100: 0,          // cudaDevAttrPageableMemoryAccessUsesHostPageTables
		101: 0,          // cudaDevAttrDirectManagedMemAccessFromHost
		108: l2 / 4 * 3, // cudaDevAttrMaxPersistingL2CacheSize: three quarters of L2
		109: 134213632,  // cudaDevAttrMaxAccessPolicyWindowSize
		112: 0,          // cudaDevAttrSparseCudaArraySupported
		113: 1,          // cudaDevAttrHostRegisterReadOnlySupported
		114: 0,          // cudaDevAttrTimelineSemaphoreInteropSupported
		116: 1,          // cudaDevAttrGPUDirectRDMASupported
		117: 1,          // cudaDevAttrGPUDirectRDMAFlushWritesOptions: cudaFlushGPUDirectRDMAWritesOptionHost
		118: 100,        // cudaDevAttrGPUDirectRDMAWritesOrdering: cudaGPUDirectRDMAWritesOrderingOwner
		119: 1,          // cudaDevAttrMemoryPoolSupportedHandleTypes: cudaMemHandleTypePosixFileDescriptor
		120: 1,          // cudaDevAttrClusterLaunch
		121: 0,          // cudaDevAttrDeferredMappingCudaArraySupported
		125: 1,          // cudaDevAttrIpcEventSupport
		126: 4,          // cudaDevAttrMemSyncDomainCount
		130: 0,          // cudaDevAttrNumaConfig: cudaDeviceNumaConfigNone
		131: -1,         // cudaDevAttrNumaId
		133: 0,          // cudaDevAttrMpsEnabled
		134: -1,         // cudaDevAttrHostNumaId: no NUMA
		135: 0,          // cudaDevAttrD3D12CigSupported
		138: 0,          // cudaDevAttrVulkanCigSupported
		139: 0x233010de, // cudaDevAttrGpuPciDeviceId: device 0x2330, vendor 0x10de
		140: 0x16c110de, // cudaDevAttrGpuPciSubsystemId
		142: 0,          // cudaDevAttrHostNumaMemoryPoolsSupported
		143: 0,          // cudaDevAttrHostNumaMultinodeIpcSupported
		144: 0,          // cudaDevAttrHostMemoryPoolsSupported
		147: 0,          // cudaDevAttrOnlyPartialHostNativeAtomicSupported
	}
}
