package cudart

// Symbol slots of libcudart, resolved on first use. The names are the exported C names; where a
// signature differs by version the caller picks by Runtime.Major (binding-notes B.2).
const (
	fnGetErrorName = iota
	fnGetErrorString
	fnRuntimeGetVersion
	fnDriverGetVersion
	fnGetDeviceCount
	fnSetDevice
	fnGetDevice
	fnInitDevice // 12.0+
	fnDeviceGetAttribute
	fnGetDeviceProperties
	fnGetDevicePropertiesV2 // 12.x only
	fnMemGetInfo
	fnDeviceGetPCIBusId
	fnDeviceSynchronize
	fnDeviceGetStreamPriorityRange
	fnGetLastError
	fnMalloc
	fnFree
	fnHostAlloc
	fnFreeHost
	fnHostRegister
	fnHostUnregister
	fnMemcpy
	fnMemcpyAsync
	fnMemset
	fnMemsetAsync
	fnStreamCreateWithPriority
	fnStreamDestroy
	fnStreamSynchronize
	fnStreamQuery
	fnStreamWaitEvent
	fnEventCreateWithFlags
	fnEventRecord
	fnEventQuery
	fnEventSynchronize
	fnEventElapsedTime
	fnEventDestroy
	fnLaunchHostFunc
	fnLaunchKernel
	fnLibraryLoadData  // 12.8+
	fnLibraryGetKernel // 12.8+
	fnLibraryUnload    // 12.8+
	fnGetDriverEntryPoint
	fnGetDriverEntryPointByVersion // 12.5+
	// Stream-ordered allocation, pools, managed memory, unified addressing (alloc/).
	fnMallocAsync
	fnMallocFromPoolAsync
	fnFreeAsync
	fnMemPoolCreate
	fnMemPoolDestroy
	fnDeviceGetDefaultMemPool
	fnDeviceGetMemPool
	fnDeviceSetMemPool
	fnMemPoolSetAttribute
	fnMemPoolGetAttribute
	fnMemPoolTrimTo
	fnMemPoolSetAccess
	fnMemPoolGetAccess
	fnMallocManaged
	fnMemPrefetchAsync // 13.0: cudaMemLocation form; before: int device
	fnMemAdvise        // 13.0: cudaMemLocation form; before: int device
	fnMemRangeGetAttribute
	fnStreamAttachMemAsync
	fnPointerGetAttributes
	fnHostGetDevicePointer
	// Graphs and stream capture (graph.go); signatures picked by Major where they changed.
	fnStreamBeginCapture
	fnStreamEndCapture
	fnStreamGetCaptureInfo
	fnStreamGetCaptureInfoV2
	fnGraphCreate
	fnGraphDestroy
	fnGraphClone
	fnGraphGetNodes
	fnGraphGetRootNodes
	fnGraphGetEdges
	fnGraphNodeGetType
	fnGraphAddDependencies
	fnGraphDebugDotPrint
	fnGraphAddKernelNode
	fnGraphAddMemcpyNode1D
	fnGraphAddMemsetNode
	fnGraphAddHostNode
	fnGraphAddChildGraphNode
	fnGraphAddEmptyNode
	fnGraphAddEventRecordNode
	fnGraphAddEventWaitNode
	fnGraphAddMemAllocNode
	fnGraphAddMemFreeNode
	fnGraphInstantiateWithFlags
	fnGraphExecDestroy
	fnGraphUpload
	fnGraphLaunch
	fnGraphExecKernelNodeSetParams
	fnGraphNodeSetEnabled
	fnGraphExecUpdate
	// Interprocess sharing of memory, events and pools (ipc.go).
	fnIpcGetMemHandle
	fnIpcOpenMemHandle
	fnIpcCloseMemHandle
	fnIpcGetEventHandle
	fnIpcOpenEventHandle
	fnMemPoolExportToShareableHandle
	fnMemPoolImportFromShareableHandle
	fnMemPoolExportPointer
	fnMemPoolImportPointer
	// Peer-to-peer access and copies between devices (peer.go).
	fnDeviceCanAccessPeer
	fnDeviceGetP2PAttribute
	fnDeviceEnablePeerAccess
	fnDeviceDisablePeerAccess
	fnMemcpyPeerAsync
	// Raw stream handles of other libraries (raw.go).
	fnStreamGetDevice // 12.8+
	fnStreamGetFlags
	fnStreamGetPriority
	// External memory and semaphores (external.go).
	fnImportExternalMemory
	fnExternalMemoryGetMappedBuffer
	fnExternalMemoryGetMappedMipmappedArray
	fnDestroyExternalMemory
	fnImportExternalSemaphore
	fnSignalExternalSemaphoresAsync   // 13.0+: the 12.x _v2 signature under the plain name
	fnSignalExternalSemaphoresAsyncV2 // 11.2–12.x
	fnWaitExternalSemaphoresAsync
	fnWaitExternalSemaphoresAsyncV2
	fnDestroyExternalSemaphore

	fnOccupancyMaxActiveBlocksPerMultiprocessor

	// Device management and error handling (devmgmt.go).
	fnDeviceGetLimit
	fnDeviceSetLimit
	fnDeviceGetCacheConfig
	fnDeviceSetCacheConfig
	fnDeviceGetSharedMemConfig // deprecated since 12.x, still exported by 13.0
	fnDeviceSetSharedMemConfig // deprecated since 12.x, still exported by 13.0
	fnSetDeviceFlags
	fnGetDeviceFlags
	fnPeekAtLastError
	fnDeviceGetByPCIBusId
	fnDeviceFlushGPUDirectRDMAWrites
	// Execution control, launch attributes and occupancy (funcattr.go, launchex.go,
	// occupancy.go): used for a cudaKernel_t without a CUfunction.
	fnFuncGetAttributes
	fnFuncSetAttribute
	fnFuncSetCacheConfig
	fnFuncGetName      // 12.3+
	fnFuncGetParamInfo // 12.4+
	fnLaunchKernelExC
	fnOccupancyMaxActiveBlocksPerMultiprocessorWithFlags
	fnOccupancyAvailableDynamicSMemPerBlock
	fnOccupancyMaxPotentialClusterSize // 11.8+
	fnOccupancyMaxActiveClusters       // 11.8+
	fnGraphKernelNodeSetAttribute
	// Stream attributes and identity, capture dependencies, records with flags, profiler
	// control (streamattr.go, profiler.go).
	fnStreamGetAttribute
	fnStreamSetAttribute
	fnStreamCopyAttributes
	fnStreamGetId // 12.0+
	fnCtxResetPersistingL2Cache
	fnStreamUpdateCaptureDependencies // 13.0+: with edge data; before: without
	fnEventRecordWithFlags
	fnProfilerStart
	fnProfilerStop
	fnStreamIsCapturing
	// Pitched (2D and 3D) memory (pitched.go).
	fnMallocPitch
	fnMemcpy2DAsync
	fnMemset2DAsync
	fnMemcpy3DAsync
	// Module globals (global.go).
	fnLibraryGetGlobal // 12.8+
	// Host memory flags (hostflags.go).
	fnHostGetFlags
	// Batched copies (batchcopy.go); optional: a loop of cudaMemcpyAsync stands in where absent.
	fnMemcpyBatchAsync // 12.8+; 13.0 dropped the failIdx parameter
	// Graph topology, instantiation with parameters, graph memory, user objects
	// (graph_topology.go, graph_instantiate.go, graph_mem.go, graph_userobj.go).
	fnGraphNodeGetDependencies   // 13.0: with edge data; before: without
	fnGraphNodeGetDependentNodes // 13.0: with edge data; before: without
	fnGraphRemoveDependencies    // 13.0: with edge data; before: without
	fnGraphDestroyNode
	fnGraphNodeFindInClone
	fnGraphNodeGetEnabled
	fnGraphInstantiateWithParams // 12.0+
	fnGraphExecGetFlags          // 12.0+
	fnDeviceGraphMemTrim
	fnDeviceGetGraphMemAttribute
	fnDeviceSetGraphMemAttribute
	fnUserObjectCreate
	fnUserObjectRetain
	fnUserObjectRelease
	fnGraphRetainUserObject
	fnGraphReleaseUserObject
	// Managed-memory range attributes, several at once (memrange.go).
	fnMemRangeGetAttributes
	// Conditional nodes and the generic node calls (graph_conditional.go).
	fnGraphConditionalHandleCreate // 12.3+
	fnGraphAddNode                 // 12.3+; 13.0 gave it the 12.4 _v2 edge-data parameter
	fnGraphNodeSetParams           // 12.3+
	fnGraphExecNodeSetParams       // 12.3+
	fnStreamBeginCaptureToGraph    // 12.3+
	// Per-kind graph node parameters (graph_params.go); every one is in 11.4 and later.
	fnGraphKernelNodeSetParams
	fnGraphMemcpyNodeGetParams
	fnGraphMemcpyNodeSetParams1D
	fnGraphExecMemcpyNodeSetParams1D
	fnGraphMemsetNodeGetParams
	fnGraphMemsetNodeSetParams
	fnGraphExecMemsetNodeSetParams
	fnGraphHostNodeGetParams
	fnGraphHostNodeSetParams
	fnGraphExecHostNodeSetParams
	fnGraphChildGraphNodeGetGraph
	fnGraphExecChildGraphNodeSetParams
	fnGraphEventRecordNodeGetEvent
	fnGraphEventRecordNodeSetEvent
	fnGraphEventWaitNodeGetEvent
	fnGraphEventWaitNodeSetEvent
	fnGraphExecEventRecordNodeSetEvent
	fnGraphExecEventWaitNodeSetEvent
	fnGraphMemAllocNodeGetParams
	fnGraphMemFreeNodeGetParams
	fnGraphKernelNodeGetAttribute
	fnGraphKernelNodeCopyAttributes // 13.0 takes (dst, src); before, (src, dst)
	// Texture and surface objects (texture.go). 11.x: the _v2 forms take the cudaTextureDesc
	// with seamlessCubemap, which 12.0 gave the plain names.
	fnCreateTextureObject
	fnCreateTextureObjectV2 // 11.x only
	fnDestroyTextureObject
	fnGetTextureObjectResourceDesc
	fnGetTextureObjectTextureDesc
	fnGetTextureObjectTextureDescV2 // 11.x only
	fnGetTextureObjectResourceViewDesc
	fnCreateSurfaceObject
	fnDestroySurfaceObject
	fnGetSurfaceObjectResourceDesc
	fnDeviceGetTexture1DLinearMaxWidth
	// CUDA arrays, mipmapped arrays and their copies (array.go).
	fnMallocArray
	fnMalloc3DArray
	fnFreeArray
	fnArrayGetInfo
	fnGetChannelDesc
	fnArrayGetPlane // 11.2+
	fnMallocMipmappedArray
	fnGetMipmappedArrayLevel
	fnFreeMipmappedArray
	fnArrayGetMemoryRequirements          // 11.6+
	fnMipmappedArrayGetMemoryRequirements // 11.6+
	fnArrayGetSparseProperties            // 11.1+
	fnMipmappedArrayGetSparseProperties   // 11.1+
	fnMemcpy3DPeerAsync
	fnMemcpy2DToArrayAsync
	fnMemcpy2DFromArrayAsync
	fnMemset3DAsync
	// A kernel node's parameters read back (graph_kernelparams.go).
	fnGraphKernelNodeGetParams
	// 3D copy nodes (graph_copy3d.go).
	fnGraphAddMemcpyNode
	fnGraphMemcpyNodeSetParams
	fnGraphExecMemcpyNodeSetParams
	// External semaphore nodes (graph_extsem.go).
	fnGraphAddExternalSemaphoresSignalNode
	fnGraphAddExternalSemaphoresWaitNode
	fnGraphExternalSemaphoresSignalNodeGetParams
	fnGraphExternalSemaphoresSignalNodeSetParams
	fnGraphExternalSemaphoresWaitNodeGetParams
	fnGraphExternalSemaphoresWaitNodeSetParams
	fnGraphExecExternalSemaphoresSignalNodeSetParams
	fnGraphExecExternalSemaphoresWaitNodeSetParams
	// Graphics interoperability: OpenGL and EGL (graphics.go). Every runtime from 11.x on
	// exports them; a runtime built without them fails the call with a SymbolError.
	fnGLGetDevices
	fnGraphicsGLRegisterBuffer
	fnGraphicsGLRegisterImage
	fnGraphicsEGLRegisterImage
	fnGraphicsUnregisterResource
	fnGraphicsResourceSetMapFlags
	fnGraphicsMapResources
	fnGraphicsUnmapResources
	fnGraphicsResourceGetMappedPointer
	fnGraphicsSubResourceGetMappedArray
	fnGraphicsResourceGetMappedMipmappedArray
	fnGraphicsResourceGetMappedEglFrame
	fnEGLStreamConsumerConnect
	fnEGLStreamConsumerConnectWithFlags
	fnEGLStreamConsumerDisconnect
	fnEGLStreamConsumerAcquireFrame
	fnEGLStreamConsumerReleaseFrame
	fnEGLStreamProducerConnect
	fnEGLStreamProducerDisconnect
	fnEGLStreamProducerPresentFrame
	fnEGLStreamProducerReturnFrame
	fnEventCreateFromEGLSync
	numRuntimeSyms
)

var runtimeSymNames = [numRuntimeSyms]string{
	fnGetErrorName:                 "cudaGetErrorName",
	fnGetErrorString:               "cudaGetErrorString",
	fnRuntimeGetVersion:            "cudaRuntimeGetVersion",
	fnDriverGetVersion:             "cudaDriverGetVersion",
	fnGetDeviceCount:               "cudaGetDeviceCount",
	fnSetDevice:                    "cudaSetDevice",
	fnGetDevice:                    "cudaGetDevice",
	fnInitDevice:                   "cudaInitDevice",
	fnDeviceGetAttribute:           "cudaDeviceGetAttribute",
	fnGetDeviceProperties:          "cudaGetDeviceProperties",
	fnGetDevicePropertiesV2:        "cudaGetDeviceProperties_v2",
	fnMemGetInfo:                   "cudaMemGetInfo",
	fnDeviceGetPCIBusId:            "cudaDeviceGetPCIBusId",
	fnDeviceSynchronize:            "cudaDeviceSynchronize",
	fnDeviceGetStreamPriorityRange: "cudaDeviceGetStreamPriorityRange",
	fnGetLastError:                 "cudaGetLastError",
	fnMalloc:                       "cudaMalloc",
	fnFree:                         "cudaFree",
	fnHostAlloc:                    "cudaHostAlloc",
	fnFreeHost:                     "cudaFreeHost",
	fnHostRegister:                 "cudaHostRegister",
	fnHostUnregister:               "cudaHostUnregister",
	fnMemcpy:                       "cudaMemcpy",
	fnMemcpyAsync:                  "cudaMemcpyAsync",
	fnMemset:                       "cudaMemset",
	fnMemsetAsync:                  "cudaMemsetAsync",
	fnStreamCreateWithPriority:     "cudaStreamCreateWithPriority",
	fnStreamDestroy:                "cudaStreamDestroy",
	fnStreamSynchronize:            "cudaStreamSynchronize",
	fnStreamQuery:                  "cudaStreamQuery",
	fnStreamWaitEvent:              "cudaStreamWaitEvent",
	fnEventCreateWithFlags:         "cudaEventCreateWithFlags",
	fnEventRecord:                  "cudaEventRecord",
	fnEventQuery:                   "cudaEventQuery",
	fnEventSynchronize:             "cudaEventSynchronize",
	fnEventElapsedTime:             "cudaEventElapsedTime",
	fnEventDestroy:                 "cudaEventDestroy",
	fnLaunchHostFunc:               "cudaLaunchHostFunc",
	fnLaunchKernel:                 "cudaLaunchKernel",
	fnLibraryLoadData:              "cudaLibraryLoadData",
	fnLibraryGetKernel:             "cudaLibraryGetKernel",
	fnLibraryUnload:                "cudaLibraryUnload",
	fnGetDriverEntryPoint:          "cudaGetDriverEntryPoint",
	fnGetDriverEntryPointByVersion: "cudaGetDriverEntryPointByVersion",
	fnMallocAsync:                  "cudaMallocAsync",
	fnMallocFromPoolAsync:          "cudaMallocFromPoolAsync",
	fnFreeAsync:                    "cudaFreeAsync",
	fnMemPoolCreate:                "cudaMemPoolCreate",
	fnMemPoolDestroy:               "cudaMemPoolDestroy",
	fnDeviceGetDefaultMemPool:      "cudaDeviceGetDefaultMemPool",
	fnDeviceGetMemPool:             "cudaDeviceGetMemPool",
	fnDeviceSetMemPool:             "cudaDeviceSetMemPool",
	fnMemPoolSetAttribute:          "cudaMemPoolSetAttribute",
	fnMemPoolGetAttribute:          "cudaMemPoolGetAttribute",
	fnMemPoolTrimTo:                "cudaMemPoolTrimTo",
	fnMemPoolSetAccess:             "cudaMemPoolSetAccess",
	fnMemPoolGetAccess:             "cudaMemPoolGetAccess",
	fnMallocManaged:                "cudaMallocManaged",
	fnMemPrefetchAsync:             "cudaMemPrefetchAsync",
	fnMemAdvise:                    "cudaMemAdvise",
	fnMemRangeGetAttribute:         "cudaMemRangeGetAttribute",
	fnStreamAttachMemAsync:         "cudaStreamAttachMemAsync",
	fnPointerGetAttributes:         "cudaPointerGetAttributes",
	fnHostGetDevicePointer:         "cudaHostGetDevicePointer",

	fnStreamBeginCapture:           "cudaStreamBeginCapture",
	fnStreamEndCapture:             "cudaStreamEndCapture",
	fnStreamGetCaptureInfo:         "cudaStreamGetCaptureInfo",
	fnStreamGetCaptureInfoV2:       "cudaStreamGetCaptureInfo_v2",
	fnGraphCreate:                  "cudaGraphCreate",
	fnGraphDestroy:                 "cudaGraphDestroy",
	fnGraphClone:                   "cudaGraphClone",
	fnGraphGetNodes:                "cudaGraphGetNodes",
	fnGraphGetRootNodes:            "cudaGraphGetRootNodes",
	fnGraphGetEdges:                "cudaGraphGetEdges",
	fnGraphNodeGetType:             "cudaGraphNodeGetType",
	fnGraphAddDependencies:         "cudaGraphAddDependencies",
	fnGraphDebugDotPrint:           "cudaGraphDebugDotPrint",
	fnGraphAddKernelNode:           "cudaGraphAddKernelNode",
	fnGraphAddMemcpyNode1D:         "cudaGraphAddMemcpyNode1D",
	fnGraphAddMemsetNode:           "cudaGraphAddMemsetNode",
	fnGraphAddHostNode:             "cudaGraphAddHostNode",
	fnGraphAddChildGraphNode:       "cudaGraphAddChildGraphNode",
	fnGraphAddEmptyNode:            "cudaGraphAddEmptyNode",
	fnGraphAddEventRecordNode:      "cudaGraphAddEventRecordNode",
	fnGraphAddEventWaitNode:        "cudaGraphAddEventWaitNode",
	fnGraphAddMemAllocNode:         "cudaGraphAddMemAllocNode",
	fnGraphAddMemFreeNode:          "cudaGraphAddMemFreeNode",
	fnGraphInstantiateWithFlags:    "cudaGraphInstantiateWithFlags",
	fnGraphExecDestroy:             "cudaGraphExecDestroy",
	fnGraphUpload:                  "cudaGraphUpload",
	fnGraphLaunch:                  "cudaGraphLaunch",
	fnGraphExecKernelNodeSetParams: "cudaGraphExecKernelNodeSetParams",
	fnGraphNodeSetEnabled:          "cudaGraphNodeSetEnabled",
	fnGraphExecUpdate:              "cudaGraphExecUpdate",

	fnIpcGetMemHandle:                  "cudaIpcGetMemHandle",
	fnIpcOpenMemHandle:                 "cudaIpcOpenMemHandle",
	fnIpcCloseMemHandle:                "cudaIpcCloseMemHandle",
	fnIpcGetEventHandle:                "cudaIpcGetEventHandle",
	fnIpcOpenEventHandle:               "cudaIpcOpenEventHandle",
	fnMemPoolExportToShareableHandle:   "cudaMemPoolExportToShareableHandle",
	fnMemPoolImportFromShareableHandle: "cudaMemPoolImportFromShareableHandle",
	fnMemPoolExportPointer:             "cudaMemPoolExportPointer",
	fnMemPoolImportPointer:             "cudaMemPoolImportPointer",

	fnDeviceCanAccessPeer:     "cudaDeviceCanAccessPeer",
	fnDeviceGetP2PAttribute:   "cudaDeviceGetP2PAttribute",
	fnDeviceEnablePeerAccess:  "cudaDeviceEnablePeerAccess",
	fnDeviceDisablePeerAccess: "cudaDeviceDisablePeerAccess",
	fnMemcpyPeerAsync:         "cudaMemcpyPeerAsync",

	fnStreamGetDevice:   "cudaStreamGetDevice",
	fnStreamGetFlags:    "cudaStreamGetFlags",
	fnStreamGetPriority: "cudaStreamGetPriority",

	fnImportExternalMemory:                  "cudaImportExternalMemory",
	fnExternalMemoryGetMappedBuffer:         "cudaExternalMemoryGetMappedBuffer",
	fnExternalMemoryGetMappedMipmappedArray: "cudaExternalMemoryGetMappedMipmappedArray",
	fnDestroyExternalMemory:                 "cudaDestroyExternalMemory",
	fnImportExternalSemaphore:               "cudaImportExternalSemaphore",
	fnSignalExternalSemaphoresAsync:         "cudaSignalExternalSemaphoresAsync",
	fnSignalExternalSemaphoresAsyncV2:       "cudaSignalExternalSemaphoresAsync_v2",
	fnWaitExternalSemaphoresAsync:           "cudaWaitExternalSemaphoresAsync",
	fnWaitExternalSemaphoresAsyncV2:         "cudaWaitExternalSemaphoresAsync_v2",
	fnDestroyExternalSemaphore:              "cudaDestroyExternalSemaphore",

	fnOccupancyMaxActiveBlocksPerMultiprocessor: "cudaOccupancyMaxActiveBlocksPerMultiprocessor",

	fnDeviceGetLimit:                 "cudaDeviceGetLimit",
	fnDeviceSetLimit:                 "cudaDeviceSetLimit",
	fnDeviceGetCacheConfig:           "cudaDeviceGetCacheConfig",
	fnDeviceSetCacheConfig:           "cudaDeviceSetCacheConfig",
	fnDeviceGetSharedMemConfig:       "cudaDeviceGetSharedMemConfig",
	fnDeviceSetSharedMemConfig:       "cudaDeviceSetSharedMemConfig",
	fnSetDeviceFlags:                 "cudaSetDeviceFlags",
	fnGetDeviceFlags:                 "cudaGetDeviceFlags",
	fnPeekAtLastError:                "cudaPeekAtLastError",
	fnDeviceGetByPCIBusId:            "cudaDeviceGetByPCIBusId",
	fnDeviceFlushGPUDirectRDMAWrites: "cudaDeviceFlushGPUDirectRDMAWrites",
	// Execution control, launch attributes and occupancy.
	fnFuncGetAttributes:  "cudaFuncGetAttributes",
	fnFuncSetAttribute:   "cudaFuncSetAttribute",
	fnFuncSetCacheConfig: "cudaFuncSetCacheConfig",
	fnFuncGetName:        "cudaFuncGetName",
	fnFuncGetParamInfo:   "cudaFuncGetParamInfo",
	fnLaunchKernelExC:    "cudaLaunchKernelExC",
	fnOccupancyMaxActiveBlocksPerMultiprocessorWithFlags: "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
	fnOccupancyAvailableDynamicSMemPerBlock:              "cudaOccupancyAvailableDynamicSMemPerBlock",
	fnOccupancyMaxPotentialClusterSize:                   "cudaOccupancyMaxPotentialClusterSize",
	fnOccupancyMaxActiveClusters:                         "cudaOccupancyMaxActiveClusters",
	fnGraphKernelNodeSetAttribute:                        "cudaGraphKernelNodeSetAttribute",
	fnStreamGetAttribute:                                 "cudaStreamGetAttribute",
	fnStreamSetAttribute:                                 "cudaStreamSetAttribute",
	fnStreamCopyAttributes:                               "cudaStreamCopyAttributes",
	fnStreamGetId:                                        "cudaStreamGetId",
	fnCtxResetPersistingL2Cache:                          "cudaCtxResetPersistingL2Cache",
	fnStreamUpdateCaptureDependencies:                    "cudaStreamUpdateCaptureDependencies",
	fnEventRecordWithFlags:                               "cudaEventRecordWithFlags",
	fnProfilerStart:                                      "cudaProfilerStart",
	fnProfilerStop:                                       "cudaProfilerStop",
	fnStreamIsCapturing:                                  "cudaStreamIsCapturing",
	// Pitched (2D and 3D) memory.
	fnMallocPitch:   "cudaMallocPitch",
	fnMemcpy2DAsync: "cudaMemcpy2DAsync",
	fnMemset2DAsync: "cudaMemset2DAsync",
	fnMemcpy3DAsync: "cudaMemcpy3DAsync",
	// Module globals (global.go).
	fnLibraryGetGlobal: "cudaLibraryGetGlobal",
	// Host memory flags (hostflags.go).
	fnHostGetFlags: "cudaHostGetFlags",
	// Batched copies.
	fnMemcpyBatchAsync: "cudaMemcpyBatchAsync",
	// Graph topology, instantiation with parameters, graph memory, user objects.
	fnGraphNodeGetDependencies:   "cudaGraphNodeGetDependencies",
	fnGraphNodeGetDependentNodes: "cudaGraphNodeGetDependentNodes",
	fnGraphRemoveDependencies:    "cudaGraphRemoveDependencies",
	fnGraphDestroyNode:           "cudaGraphDestroyNode",
	fnGraphNodeFindInClone:       "cudaGraphNodeFindInClone",
	fnGraphNodeGetEnabled:        "cudaGraphNodeGetEnabled",
	fnGraphInstantiateWithParams: "cudaGraphInstantiateWithParams",
	fnGraphExecGetFlags:          "cudaGraphExecGetFlags",
	fnDeviceGraphMemTrim:         "cudaDeviceGraphMemTrim",
	fnDeviceGetGraphMemAttribute: "cudaDeviceGetGraphMemAttribute",
	fnDeviceSetGraphMemAttribute: "cudaDeviceSetGraphMemAttribute",
	fnUserObjectCreate:           "cudaUserObjectCreate",
	fnUserObjectRetain:           "cudaUserObjectRetain",
	fnUserObjectRelease:          "cudaUserObjectRelease",
	fnGraphRetainUserObject:      "cudaGraphRetainUserObject",
	fnGraphReleaseUserObject:     "cudaGraphReleaseUserObject",
	// Managed-memory range attributes, several at once (memrange.go).
	fnMemRangeGetAttributes: "cudaMemRangeGetAttributes",
	// Conditional nodes and the generic node calls (graph_conditional.go).
	fnGraphConditionalHandleCreate: "cudaGraphConditionalHandleCreate",
	fnGraphAddNode:                 "cudaGraphAddNode",
	fnGraphNodeSetParams:           "cudaGraphNodeSetParams",
	fnGraphExecNodeSetParams:       "cudaGraphExecNodeSetParams",
	fnStreamBeginCaptureToGraph:    "cudaStreamBeginCaptureToGraph",
	// Per-kind graph node parameters.
	fnGraphKernelNodeSetParams:         "cudaGraphKernelNodeSetParams",
	fnGraphMemcpyNodeGetParams:         "cudaGraphMemcpyNodeGetParams",
	fnGraphMemcpyNodeSetParams1D:       "cudaGraphMemcpyNodeSetParams1D",
	fnGraphExecMemcpyNodeSetParams1D:   "cudaGraphExecMemcpyNodeSetParams1D",
	fnGraphMemsetNodeGetParams:         "cudaGraphMemsetNodeGetParams",
	fnGraphMemsetNodeSetParams:         "cudaGraphMemsetNodeSetParams",
	fnGraphExecMemsetNodeSetParams:     "cudaGraphExecMemsetNodeSetParams",
	fnGraphHostNodeGetParams:           "cudaGraphHostNodeGetParams",
	fnGraphHostNodeSetParams:           "cudaGraphHostNodeSetParams",
	fnGraphExecHostNodeSetParams:       "cudaGraphExecHostNodeSetParams",
	fnGraphChildGraphNodeGetGraph:      "cudaGraphChildGraphNodeGetGraph",
	fnGraphExecChildGraphNodeSetParams: "cudaGraphExecChildGraphNodeSetParams",
	fnGraphEventRecordNodeGetEvent:     "cudaGraphEventRecordNodeGetEvent",
	fnGraphEventRecordNodeSetEvent:     "cudaGraphEventRecordNodeSetEvent",
	fnGraphEventWaitNodeGetEvent:       "cudaGraphEventWaitNodeGetEvent",
	fnGraphEventWaitNodeSetEvent:       "cudaGraphEventWaitNodeSetEvent",
	fnGraphExecEventRecordNodeSetEvent: "cudaGraphExecEventRecordNodeSetEvent",
	fnGraphExecEventWaitNodeSetEvent:   "cudaGraphExecEventWaitNodeSetEvent",
	fnGraphMemAllocNodeGetParams:       "cudaGraphMemAllocNodeGetParams",
	fnGraphMemFreeNodeGetParams:        "cudaGraphMemFreeNodeGetParams",
	fnGraphKernelNodeGetAttribute:      "cudaGraphKernelNodeGetAttribute",
	fnGraphKernelNodeCopyAttributes:    "cudaGraphKernelNodeCopyAttributes",
	// Texture and surface objects.
	fnCreateTextureObject:              "cudaCreateTextureObject",
	fnCreateTextureObjectV2:            "cudaCreateTextureObject_v2",
	fnDestroyTextureObject:             "cudaDestroyTextureObject",
	fnGetTextureObjectResourceDesc:     "cudaGetTextureObjectResourceDesc",
	fnGetTextureObjectTextureDesc:      "cudaGetTextureObjectTextureDesc",
	fnGetTextureObjectTextureDescV2:    "cudaGetTextureObjectTextureDesc_v2",
	fnGetTextureObjectResourceViewDesc: "cudaGetTextureObjectResourceViewDesc",
	fnCreateSurfaceObject:              "cudaCreateSurfaceObject",
	fnDestroySurfaceObject:             "cudaDestroySurfaceObject",
	fnGetSurfaceObjectResourceDesc:     "cudaGetSurfaceObjectResourceDesc",
	fnDeviceGetTexture1DLinearMaxWidth: "cudaDeviceGetTexture1DLinearMaxWidth",
	// CUDA arrays, mipmapped arrays and their copies.
	fnMallocArray:                         "cudaMallocArray",
	fnMalloc3DArray:                       "cudaMalloc3DArray",
	fnFreeArray:                           "cudaFreeArray",
	fnArrayGetInfo:                        "cudaArrayGetInfo",
	fnGetChannelDesc:                      "cudaGetChannelDesc",
	fnArrayGetPlane:                       "cudaArrayGetPlane",
	fnMallocMipmappedArray:                "cudaMallocMipmappedArray",
	fnGetMipmappedArrayLevel:              "cudaGetMipmappedArrayLevel",
	fnFreeMipmappedArray:                  "cudaFreeMipmappedArray",
	fnArrayGetMemoryRequirements:          "cudaArrayGetMemoryRequirements",
	fnMipmappedArrayGetMemoryRequirements: "cudaMipmappedArrayGetMemoryRequirements",
	fnArrayGetSparseProperties:            "cudaArrayGetSparseProperties",
	fnMipmappedArrayGetSparseProperties:   "cudaMipmappedArrayGetSparseProperties",
	fnMemcpy3DPeerAsync:                   "cudaMemcpy3DPeerAsync",
	fnMemcpy2DToArrayAsync:                "cudaMemcpy2DToArrayAsync",
	fnMemcpy2DFromArrayAsync:              "cudaMemcpy2DFromArrayAsync",
	fnMemset3DAsync:                       "cudaMemset3DAsync",
	// A kernel node's parameters read back (graph_kernelparams.go).
	fnGraphKernelNodeGetParams: "cudaGraphKernelNodeGetParams",
	// 3D copy nodes (graph_copy3d.go).
	fnGraphAddMemcpyNode:           "cudaGraphAddMemcpyNode",
	fnGraphMemcpyNodeSetParams:     "cudaGraphMemcpyNodeSetParams",
	fnGraphExecMemcpyNodeSetParams: "cudaGraphExecMemcpyNodeSetParams",
	// External semaphore nodes (graph_extsem.go).
	fnGraphAddExternalSemaphoresSignalNode:           "cudaGraphAddExternalSemaphoresSignalNode",
	fnGraphAddExternalSemaphoresWaitNode:             "cudaGraphAddExternalSemaphoresWaitNode",
	fnGraphExternalSemaphoresSignalNodeGetParams:     "cudaGraphExternalSemaphoresSignalNodeGetParams",
	fnGraphExternalSemaphoresSignalNodeSetParams:     "cudaGraphExternalSemaphoresSignalNodeSetParams",
	fnGraphExternalSemaphoresWaitNodeGetParams:       "cudaGraphExternalSemaphoresWaitNodeGetParams",
	fnGraphExternalSemaphoresWaitNodeSetParams:       "cudaGraphExternalSemaphoresWaitNodeSetParams",
	fnGraphExecExternalSemaphoresSignalNodeSetParams: "cudaGraphExecExternalSemaphoresSignalNodeSetParams",
	fnGraphExecExternalSemaphoresWaitNodeSetParams:   "cudaGraphExecExternalSemaphoresWaitNodeSetParams",
	// Graphics interoperability: OpenGL and EGL (graphics.go).
	fnGLGetDevices:                            "cudaGLGetDevices",
	fnGraphicsGLRegisterBuffer:                "cudaGraphicsGLRegisterBuffer",
	fnGraphicsGLRegisterImage:                 "cudaGraphicsGLRegisterImage",
	fnGraphicsEGLRegisterImage:                "cudaGraphicsEGLRegisterImage",
	fnGraphicsUnregisterResource:              "cudaGraphicsUnregisterResource",
	fnGraphicsResourceSetMapFlags:             "cudaGraphicsResourceSetMapFlags",
	fnGraphicsMapResources:                    "cudaGraphicsMapResources",
	fnGraphicsUnmapResources:                  "cudaGraphicsUnmapResources",
	fnGraphicsResourceGetMappedPointer:        "cudaGraphicsResourceGetMappedPointer",
	fnGraphicsSubResourceGetMappedArray:       "cudaGraphicsSubResourceGetMappedArray",
	fnGraphicsResourceGetMappedMipmappedArray: "cudaGraphicsResourceGetMappedMipmappedArray",
	fnGraphicsResourceGetMappedEglFrame:       "cudaGraphicsResourceGetMappedEglFrame",
	fnEGLStreamConsumerConnect:                "cudaEGLStreamConsumerConnect",
	fnEGLStreamConsumerConnectWithFlags:       "cudaEGLStreamConsumerConnectWithFlags",
	fnEGLStreamConsumerDisconnect:             "cudaEGLStreamConsumerDisconnect",
	fnEGLStreamConsumerAcquireFrame:           "cudaEGLStreamConsumerAcquireFrame",
	fnEGLStreamConsumerReleaseFrame:           "cudaEGLStreamConsumerReleaseFrame",
	fnEGLStreamProducerConnect:                "cudaEGLStreamProducerConnect",
	fnEGLStreamProducerDisconnect:             "cudaEGLStreamProducerDisconnect",
	fnEGLStreamProducerPresentFrame:           "cudaEGLStreamProducerPresentFrame",
	fnEGLStreamProducerReturnFrame:            "cudaEGLStreamProducerReturnFrame",
	fnEventCreateFromEGLSync:                  "cudaEventCreateFromEGLSync",
}
