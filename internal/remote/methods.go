package remote

// method names a call: the first 8 bytes of every request. The order is the protocol: both
// sides are the same binary, so the numbers need no stability beyond one build.
type method uint64

const (
	_ method = iota // 0 is no method: a zeroed request is refused
	// Backend-level calls.
	mInfo // backend name, versions and device count
	mOpen
	// Device.
	mName
	mAttribute
	mPCIBusID
	mMemInfo
	mSynchronize
	mStreamPriorityRange
	mLastError
	mMalloc
	mFree
	mCopyDtoD
	mMemset
	mStreamCreate
	mStreamDestroy
	mStreamSynchronize
	mStreamQuery
	mStreamWaitEvent
	mEventCreate
	mEventRecord
	mEventQuery
	mEventSynchronize
	mEventElapsed
	mEventDestroy
	mLoadModule
	mModuleKernel
	mUnloadModule
	mLaunch
	// AllocDevice.
	mMallocAsync
	mMallocFromPoolAsync
	mFreeAsync
	mMemPoolCreate
	mMemPoolDestroy
	mDefaultMemPool
	mCurrentMemPool
	mSetCurrentMemPool
	mMemPoolSetAttribute
	mMemPoolGetAttribute
	mMemPoolTrimTo
	mMemPoolSetAccess
	mMemPoolGetAccess
	mMallocManaged
	mMemPrefetch
	mMemAdvise
	mMemRangeAttribute
	mStreamAttachMem
	mPointerAttributes
	// GraphDevice.
	mStreamBeginCapture
	mStreamEndCapture
	mStreamCaptureInfo
	mGraphCreate
	mGraphDestroy
	mGraphClone
	mGraphNodes
	mGraphRootNodes
	mGraphEdges
	mGraphNodeType
	mGraphAddDependencies
	mGraphDebugDot
	mGraphAddKernelNode
	mGraphAddCopyDtoD
	mGraphAddMemsetNode
	mGraphAddChildNode
	mGraphAddEmptyNode
	mGraphAddEventRecordNode
	mGraphAddEventWaitNode
	mGraphAddMemAllocNode
	mGraphAddMemFreeNode
	mGraphInstantiate
	mGraphExecDestroy
	mGraphUpload
	mGraphLaunch
	mGraphLaunchN
	mGraphExecKernelNodeSetParams
	mGraphNodeSetEnabled
	mGraphExecUpdate
	// IPCDevice.
	mIpcGetMemHandle
	mIpcOpenMemHandle
	mIpcCloseMemHandle
	mIpcGetEventHandle
	mIpcOpenEventHandle
	mMemPoolExportPointer
	mMemPoolImportPointer
	// PeerDevice.
	mCanAccessPeer
	mP2PAttribute
	mEnablePeerAccess
	mDisablePeerAccess
	mMemcpyPeerAsync
	// RawDevice.
	mStreamGetDevice
	mStreamGetFlags
	mStreamGetPriority
	// ExternalDevice (the parts that need no file descriptor).
	mExternalMemoryMappedBuffer
	mDestroyExternalMemory
	mSignalExternalSemaphore
	mWaitExternalSemaphore
	mDestroyExternalSemaphore
	// Host memory shared with the worker (hostmem.go), served by the server itself.
	mHostAlloc
	mHostFree
	mCopyHtoD
	mCopyDtoH
	mHostDevicePointer
	mGraphAddCopyHtoD
	mGraphAddCopyDtoH
	mLoadModuleShared  // an image too large for a call, passed in a memfd
	mLoadModuleKernels // a module with simulator kernels, named for the worker's registry
	mBoard             // the event board's memory (board.go)

	mCount
)
