package device

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Attribute is a cudaDeviceAttr: one fact about a device, read with Device.Attribute. The
// constants below are every attribute of CUDA 13.0's runtime (the reserved values left out);
// an older runtime answers the ones it knows and refuses the rest with cudaerr.InvalidValue.
// Sizes are in bytes and clock rates in kHz; flags are 1 for yes and 0 for no.
type Attribute int32

// The device attributes, named after cudaDevAttr* without the prefix, with Go initialisms.
const (
	AttrMaxThreadsPerBlock                     Attribute = 1
	AttrMaxBlockDimX                           Attribute = 2
	AttrMaxBlockDimY                           Attribute = 3
	AttrMaxBlockDimZ                           Attribute = 4
	AttrMaxGridDimX                            Attribute = 5
	AttrMaxGridDimY                            Attribute = 6
	AttrMaxGridDimZ                            Attribute = 7
	AttrMaxSharedMemoryPerBlock                Attribute = 8
	AttrTotalConstantMemory                    Attribute = 9
	AttrWarpSize                               Attribute = 10
	AttrMaxPitch                               Attribute = 11
	AttrMaxRegistersPerBlock                   Attribute = 12
	AttrClockRate                              Attribute = 13
	AttrTextureAlignment                       Attribute = 14
	AttrGPUOverlap                             Attribute = 15
	AttrMultiProcessorCount                    Attribute = 16
	AttrKernelExecTimeout                      Attribute = 17
	AttrIntegrated                             Attribute = 18
	AttrCanMapHostMemory                       Attribute = 19
	AttrComputeMode                            Attribute = 20
	AttrMaxTexture1DWidth                      Attribute = 21
	AttrMaxTexture2DWidth                      Attribute = 22
	AttrMaxTexture2DHeight                     Attribute = 23
	AttrMaxTexture3DWidth                      Attribute = 24
	AttrMaxTexture3DHeight                     Attribute = 25
	AttrMaxTexture3DDepth                      Attribute = 26
	AttrMaxTexture2DLayeredWidth               Attribute = 27
	AttrMaxTexture2DLayeredHeight              Attribute = 28
	AttrMaxTexture2DLayeredLayers              Attribute = 29
	AttrSurfaceAlignment                       Attribute = 30
	AttrConcurrentKernels                      Attribute = 31
	AttrECCEnabled                             Attribute = 32
	AttrPCIBusID                               Attribute = 33
	AttrPCIDeviceID                            Attribute = 34
	AttrTCCDriver                              Attribute = 35
	AttrMemoryClockRate                        Attribute = 36
	AttrGlobalMemoryBusWidth                   Attribute = 37
	AttrL2CacheSize                            Attribute = 38
	AttrMaxThreadsPerMultiProcessor            Attribute = 39
	AttrAsyncEngineCount                       Attribute = 40
	AttrUnifiedAddressing                      Attribute = 41
	AttrMaxTexture1DLayeredWidth               Attribute = 42
	AttrMaxTexture1DLayeredLayers              Attribute = 43
	AttrMaxTexture2DGatherWidth                Attribute = 45
	AttrMaxTexture2DGatherHeight               Attribute = 46
	AttrMaxTexture3DWidthAlt                   Attribute = 47
	AttrMaxTexture3DHeightAlt                  Attribute = 48
	AttrMaxTexture3DDepthAlt                   Attribute = 49
	AttrPCIDomainID                            Attribute = 50
	AttrTexturePitchAlignment                  Attribute = 51
	AttrMaxTextureCubemapWidth                 Attribute = 52
	AttrMaxTextureCubemapLayeredWidth          Attribute = 53
	AttrMaxTextureCubemapLayeredLayers         Attribute = 54
	AttrMaxSurface1DWidth                      Attribute = 55
	AttrMaxSurface2DWidth                      Attribute = 56
	AttrMaxSurface2DHeight                     Attribute = 57
	AttrMaxSurface3DWidth                      Attribute = 58
	AttrMaxSurface3DHeight                     Attribute = 59
	AttrMaxSurface3DDepth                      Attribute = 60
	AttrMaxSurface1DLayeredWidth               Attribute = 61
	AttrMaxSurface1DLayeredLayers              Attribute = 62
	AttrMaxSurface2DLayeredWidth               Attribute = 63
	AttrMaxSurface2DLayeredHeight              Attribute = 64
	AttrMaxSurface2DLayeredLayers              Attribute = 65
	AttrMaxSurfaceCubemapWidth                 Attribute = 66
	AttrMaxSurfaceCubemapLayeredWidth          Attribute = 67
	AttrMaxSurfaceCubemapLayeredLayers         Attribute = 68
	AttrMaxTexture1DLinearWidth                Attribute = 69
	AttrMaxTexture2DLinearWidth                Attribute = 70
	AttrMaxTexture2DLinearHeight               Attribute = 71
	AttrMaxTexture2DLinearPitch                Attribute = 72
	AttrMaxTexture2DMipmappedWidth             Attribute = 73
	AttrMaxTexture2DMipmappedHeight            Attribute = 74
	AttrComputeCapabilityMajor                 Attribute = 75
	AttrComputeCapabilityMinor                 Attribute = 76
	AttrMaxTexture1DMipmappedWidth             Attribute = 77
	AttrStreamPrioritiesSupported              Attribute = 78
	AttrGlobalL1CacheSupported                 Attribute = 79
	AttrLocalL1CacheSupported                  Attribute = 80
	AttrMaxSharedMemoryPerMultiprocessor       Attribute = 81
	AttrMaxRegistersPerMultiprocessor          Attribute = 82
	AttrManagedMemory                          Attribute = 83
	AttrIsMultiGPUBoard                        Attribute = 84
	AttrMultiGPUBoardGroupID                   Attribute = 85
	AttrHostNativeAtomicSupported              Attribute = 86
	AttrSingleToDoublePrecisionPerfRatio       Attribute = 87
	AttrPageableMemoryAccess                   Attribute = 88
	AttrConcurrentManagedAccess                Attribute = 89
	AttrComputePreemptionSupported             Attribute = 90
	AttrCanUseHostPointerForRegisteredMem      Attribute = 91
	AttrCooperativeLaunch                      Attribute = 95
	AttrMaxSharedMemoryPerBlockOptin           Attribute = 97
	AttrCanFlushRemoteWrites                   Attribute = 98
	AttrHostRegisterSupported                  Attribute = 99
	AttrPageableMemoryAccessUsesHostPageTables Attribute = 100
	AttrDirectManagedMemAccessFromHost         Attribute = 101
	AttrMaxBlocksPerMultiprocessor             Attribute = 106
	AttrMaxPersistingL2CacheSize               Attribute = 108
	AttrMaxAccessPolicyWindowSize              Attribute = 109
	AttrSparseCUDAArraySupported               Attribute = 112
	AttrHostRegisterReadOnlySupported          Attribute = 113
	AttrTimelineSemaphoreInteropSupported      Attribute = 114
	AttrMemoryPoolsSupported                   Attribute = 115
	AttrGPUDirectRDMASupported                 Attribute = 116
	AttrGPUDirectRDMAFlushWritesOptions        Attribute = 117
	AttrGPUDirectRDMAWritesOrdering            Attribute = 118
	AttrMemoryPoolSupportedHandleTypes         Attribute = 119
	AttrClusterLaunch                          Attribute = 120
	AttrDeferredMappingCUDAArraySupported      Attribute = 121
	AttrIPCEventSupport                        Attribute = 125
	AttrMemSyncDomainCount                     Attribute = 126
	AttrNUMAConfig                             Attribute = 130
	AttrNUMAID                                 Attribute = 131
	AttrMPSEnabled                             Attribute = 133
	AttrHostNUMAID                             Attribute = 134
	AttrD3D12CIGSupported                      Attribute = 135
	AttrVulkanCIGSupported                     Attribute = 138
	AttrGPUPCIDeviceID                         Attribute = 139
	AttrGPUPCISubsystemID                      Attribute = 140
	AttrHostNUMAMemoryPoolsSupported           Attribute = 142
	AttrHostNUMAMultinodeIPCSupported          Attribute = 143
	AttrHostMemoryPoolsSupported               Attribute = 144
	AttrOnlyPartialHostNativeAtomicSupported   Attribute = 147
)

// attributeNames are the runtime's enumerator names.
var attributeNames = map[Attribute]string{
	AttrMaxThreadsPerBlock:                     "cudaDevAttrMaxThreadsPerBlock",
	AttrMaxBlockDimX:                           "cudaDevAttrMaxBlockDimX",
	AttrMaxBlockDimY:                           "cudaDevAttrMaxBlockDimY",
	AttrMaxBlockDimZ:                           "cudaDevAttrMaxBlockDimZ",
	AttrMaxGridDimX:                            "cudaDevAttrMaxGridDimX",
	AttrMaxGridDimY:                            "cudaDevAttrMaxGridDimY",
	AttrMaxGridDimZ:                            "cudaDevAttrMaxGridDimZ",
	AttrMaxSharedMemoryPerBlock:                "cudaDevAttrMaxSharedMemoryPerBlock",
	AttrTotalConstantMemory:                    "cudaDevAttrTotalConstantMemory",
	AttrWarpSize:                               "cudaDevAttrWarpSize",
	AttrMaxPitch:                               "cudaDevAttrMaxPitch",
	AttrMaxRegistersPerBlock:                   "cudaDevAttrMaxRegistersPerBlock",
	AttrClockRate:                              "cudaDevAttrClockRate",
	AttrTextureAlignment:                       "cudaDevAttrTextureAlignment",
	AttrGPUOverlap:                             "cudaDevAttrGpuOverlap",
	AttrMultiProcessorCount:                    "cudaDevAttrMultiProcessorCount",
	AttrKernelExecTimeout:                      "cudaDevAttrKernelExecTimeout",
	AttrIntegrated:                             "cudaDevAttrIntegrated",
	AttrCanMapHostMemory:                       "cudaDevAttrCanMapHostMemory",
	AttrComputeMode:                            "cudaDevAttrComputeMode",
	AttrMaxTexture1DWidth:                      "cudaDevAttrMaxTexture1DWidth",
	AttrMaxTexture2DWidth:                      "cudaDevAttrMaxTexture2DWidth",
	AttrMaxTexture2DHeight:                     "cudaDevAttrMaxTexture2DHeight",
	AttrMaxTexture3DWidth:                      "cudaDevAttrMaxTexture3DWidth",
	AttrMaxTexture3DHeight:                     "cudaDevAttrMaxTexture3DHeight",
	AttrMaxTexture3DDepth:                      "cudaDevAttrMaxTexture3DDepth",
	AttrMaxTexture2DLayeredWidth:               "cudaDevAttrMaxTexture2DLayeredWidth",
	AttrMaxTexture2DLayeredHeight:              "cudaDevAttrMaxTexture2DLayeredHeight",
	AttrMaxTexture2DLayeredLayers:              "cudaDevAttrMaxTexture2DLayeredLayers",
	AttrSurfaceAlignment:                       "cudaDevAttrSurfaceAlignment",
	AttrConcurrentKernels:                      "cudaDevAttrConcurrentKernels",
	AttrECCEnabled:                             "cudaDevAttrEccEnabled",
	AttrPCIBusID:                               "cudaDevAttrPciBusId",
	AttrPCIDeviceID:                            "cudaDevAttrPciDeviceId",
	AttrTCCDriver:                              "cudaDevAttrTccDriver",
	AttrMemoryClockRate:                        "cudaDevAttrMemoryClockRate",
	AttrGlobalMemoryBusWidth:                   "cudaDevAttrGlobalMemoryBusWidth",
	AttrL2CacheSize:                            "cudaDevAttrL2CacheSize",
	AttrMaxThreadsPerMultiProcessor:            "cudaDevAttrMaxThreadsPerMultiProcessor",
	AttrAsyncEngineCount:                       "cudaDevAttrAsyncEngineCount",
	AttrUnifiedAddressing:                      "cudaDevAttrUnifiedAddressing",
	AttrMaxTexture1DLayeredWidth:               "cudaDevAttrMaxTexture1DLayeredWidth",
	AttrMaxTexture1DLayeredLayers:              "cudaDevAttrMaxTexture1DLayeredLayers",
	AttrMaxTexture2DGatherWidth:                "cudaDevAttrMaxTexture2DGatherWidth",
	AttrMaxTexture2DGatherHeight:               "cudaDevAttrMaxTexture2DGatherHeight",
	AttrMaxTexture3DWidthAlt:                   "cudaDevAttrMaxTexture3DWidthAlt",
	AttrMaxTexture3DHeightAlt:                  "cudaDevAttrMaxTexture3DHeightAlt",
	AttrMaxTexture3DDepthAlt:                   "cudaDevAttrMaxTexture3DDepthAlt",
	AttrPCIDomainID:                            "cudaDevAttrPciDomainId",
	AttrTexturePitchAlignment:                  "cudaDevAttrTexturePitchAlignment",
	AttrMaxTextureCubemapWidth:                 "cudaDevAttrMaxTextureCubemapWidth",
	AttrMaxTextureCubemapLayeredWidth:          "cudaDevAttrMaxTextureCubemapLayeredWidth",
	AttrMaxTextureCubemapLayeredLayers:         "cudaDevAttrMaxTextureCubemapLayeredLayers",
	AttrMaxSurface1DWidth:                      "cudaDevAttrMaxSurface1DWidth",
	AttrMaxSurface2DWidth:                      "cudaDevAttrMaxSurface2DWidth",
	AttrMaxSurface2DHeight:                     "cudaDevAttrMaxSurface2DHeight",
	AttrMaxSurface3DWidth:                      "cudaDevAttrMaxSurface3DWidth",
	AttrMaxSurface3DHeight:                     "cudaDevAttrMaxSurface3DHeight",
	AttrMaxSurface3DDepth:                      "cudaDevAttrMaxSurface3DDepth",
	AttrMaxSurface1DLayeredWidth:               "cudaDevAttrMaxSurface1DLayeredWidth",
	AttrMaxSurface1DLayeredLayers:              "cudaDevAttrMaxSurface1DLayeredLayers",
	AttrMaxSurface2DLayeredWidth:               "cudaDevAttrMaxSurface2DLayeredWidth",
	AttrMaxSurface2DLayeredHeight:              "cudaDevAttrMaxSurface2DLayeredHeight",
	AttrMaxSurface2DLayeredLayers:              "cudaDevAttrMaxSurface2DLayeredLayers",
	AttrMaxSurfaceCubemapWidth:                 "cudaDevAttrMaxSurfaceCubemapWidth",
	AttrMaxSurfaceCubemapLayeredWidth:          "cudaDevAttrMaxSurfaceCubemapLayeredWidth",
	AttrMaxSurfaceCubemapLayeredLayers:         "cudaDevAttrMaxSurfaceCubemapLayeredLayers",
	AttrMaxTexture1DLinearWidth:                "cudaDevAttrMaxTexture1DLinearWidth",
	AttrMaxTexture2DLinearWidth:                "cudaDevAttrMaxTexture2DLinearWidth",
	AttrMaxTexture2DLinearHeight:               "cudaDevAttrMaxTexture2DLinearHeight",
	AttrMaxTexture2DLinearPitch:                "cudaDevAttrMaxTexture2DLinearPitch",
	AttrMaxTexture2DMipmappedWidth:             "cudaDevAttrMaxTexture2DMipmappedWidth",
	AttrMaxTexture2DMipmappedHeight:            "cudaDevAttrMaxTexture2DMipmappedHeight",
	AttrComputeCapabilityMajor:                 "cudaDevAttrComputeCapabilityMajor",
	AttrComputeCapabilityMinor:                 "cudaDevAttrComputeCapabilityMinor",
	AttrMaxTexture1DMipmappedWidth:             "cudaDevAttrMaxTexture1DMipmappedWidth",
	AttrStreamPrioritiesSupported:              "cudaDevAttrStreamPrioritiesSupported",
	AttrGlobalL1CacheSupported:                 "cudaDevAttrGlobalL1CacheSupported",
	AttrLocalL1CacheSupported:                  "cudaDevAttrLocalL1CacheSupported",
	AttrMaxSharedMemoryPerMultiprocessor:       "cudaDevAttrMaxSharedMemoryPerMultiprocessor",
	AttrMaxRegistersPerMultiprocessor:          "cudaDevAttrMaxRegistersPerMultiprocessor",
	AttrManagedMemory:                          "cudaDevAttrManagedMemory",
	AttrIsMultiGPUBoard:                        "cudaDevAttrIsMultiGpuBoard",
	AttrMultiGPUBoardGroupID:                   "cudaDevAttrMultiGpuBoardGroupID",
	AttrHostNativeAtomicSupported:              "cudaDevAttrHostNativeAtomicSupported",
	AttrSingleToDoublePrecisionPerfRatio:       "cudaDevAttrSingleToDoublePrecisionPerfRatio",
	AttrPageableMemoryAccess:                   "cudaDevAttrPageableMemoryAccess",
	AttrConcurrentManagedAccess:                "cudaDevAttrConcurrentManagedAccess",
	AttrComputePreemptionSupported:             "cudaDevAttrComputePreemptionSupported",
	AttrCanUseHostPointerForRegisteredMem:      "cudaDevAttrCanUseHostPointerForRegisteredMem",
	AttrCooperativeLaunch:                      "cudaDevAttrCooperativeLaunch",
	AttrMaxSharedMemoryPerBlockOptin:           "cudaDevAttrMaxSharedMemoryPerBlockOptin",
	AttrCanFlushRemoteWrites:                   "cudaDevAttrCanFlushRemoteWrites",
	AttrHostRegisterSupported:                  "cudaDevAttrHostRegisterSupported",
	AttrPageableMemoryAccessUsesHostPageTables: "cudaDevAttrPageableMemoryAccessUsesHostPageTables",
	AttrDirectManagedMemAccessFromHost:         "cudaDevAttrDirectManagedMemAccessFromHost",
	AttrMaxBlocksPerMultiprocessor:             "cudaDevAttrMaxBlocksPerMultiprocessor",
	AttrMaxPersistingL2CacheSize:               "cudaDevAttrMaxPersistingL2CacheSize",
	AttrMaxAccessPolicyWindowSize:              "cudaDevAttrMaxAccessPolicyWindowSize",
	AttrSparseCUDAArraySupported:               "cudaDevAttrSparseCudaArraySupported",
	AttrHostRegisterReadOnlySupported:          "cudaDevAttrHostRegisterReadOnlySupported",
	AttrTimelineSemaphoreInteropSupported:      "cudaDevAttrTimelineSemaphoreInteropSupported",
	AttrMemoryPoolsSupported:                   "cudaDevAttrMemoryPoolsSupported",
	AttrGPUDirectRDMASupported:                 "cudaDevAttrGPUDirectRDMASupported",
	AttrGPUDirectRDMAFlushWritesOptions:        "cudaDevAttrGPUDirectRDMAFlushWritesOptions",
	AttrGPUDirectRDMAWritesOrdering:            "cudaDevAttrGPUDirectRDMAWritesOrdering",
	AttrMemoryPoolSupportedHandleTypes:         "cudaDevAttrMemoryPoolSupportedHandleTypes",
	AttrClusterLaunch:                          "cudaDevAttrClusterLaunch",
	AttrDeferredMappingCUDAArraySupported:      "cudaDevAttrDeferredMappingCudaArraySupported",
	AttrIPCEventSupport:                        "cudaDevAttrIpcEventSupport",
	AttrMemSyncDomainCount:                     "cudaDevAttrMemSyncDomainCount",
	AttrNUMAConfig:                             "cudaDevAttrNumaConfig",
	AttrNUMAID:                                 "cudaDevAttrNumaId",
	AttrMPSEnabled:                             "cudaDevAttrMpsEnabled",
	AttrHostNUMAID:                             "cudaDevAttrHostNumaId",
	AttrD3D12CIGSupported:                      "cudaDevAttrD3D12CigSupported",
	AttrVulkanCIGSupported:                     "cudaDevAttrVulkanCigSupported",
	AttrGPUPCIDeviceID:                         "cudaDevAttrGpuPciDeviceId",
	AttrGPUPCISubsystemID:                      "cudaDevAttrGpuPciSubsystemId",
	AttrHostNUMAMemoryPoolsSupported:           "cudaDevAttrHostNumaMemoryPoolsSupported",
	AttrHostNUMAMultinodeIPCSupported:          "cudaDevAttrHostNumaMultinodeIpcSupported",
	AttrHostMemoryPoolsSupported:               "cudaDevAttrHostMemoryPoolsSupported",
	AttrOnlyPartialHostNativeAtomicSupported:   "cudaDevAttrOnlyPartialHostNativeAtomicSupported",
}

// String is the attribute's runtime name, e.g. "cudaDevAttrMultiProcessorCount", or
// "cudaDeviceAttr(N)" for a value CUDA 13.0 does not name.
func (a Attribute) String() string {
	if n, ok := attributeNames[a]; ok {
		return n
	}
	return fmt.Sprintf("cudaDeviceAttr(%d)", int32(a))
}

// Known reports whether a is one of CUDA 13.0's attributes.
func (a Attribute) Known() bool { _, ok := attributeNames[a]; return ok }

// Attributes lists every attribute of CUDA 13.0, in ascending order.
func Attributes() []Attribute {
	out := make([]Attribute, 0, len(attributeNames))
	for a := Attribute(0); len(out) < len(attributeNames); a++ {
		if a.Known() {
			out = append(out, a)
		}
	}
	return out
}

// Attribute reads attribute a of the device from the runtime (cudaDeviceGetAttribute); it
// returns once the device's actor has asked. An attribute the loaded runtime does not know (a
// value CUDA 13.0 does not name, or one newer than an older runtime) is an error wrapping
// cudaerr.InvalidValue that names the attribute; the device stays usable.
func (d *Device) Attribute(ctx context.Context, a Attribute) (int, error) {
	return core.Run(ctx, d.core(), func(rt backend.Device, _ *core.Tracker) (int, error) {
		v, err := rt.Attribute(backend.Attr(a))
		if err != nil {
			return 0, fmt.Errorf("gpuactor: device %d: reading attribute %v (%d): %w", d.Ordinal(), a, int32(a), err)
		}
		return v, nil
	}).Await(ctx)
}
