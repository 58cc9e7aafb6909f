// Code generated from the cudaError enum of CUDA 13.0 driver_types.h (names and values only); DO NOT EDIT.

package cudaerr

// The runtime's error codes. Each is an error value: errors.Is(err, cudaerr.MemoryAllocation)
// matches any error that carries that code.
const (
	Success                        Code = 0     // cudaSuccess
	InvalidValue                   Code = 1     // cudaErrorInvalidValue
	MemoryAllocation               Code = 2     // cudaErrorMemoryAllocation
	InitializationError            Code = 3     // cudaErrorInitializationError
	CudartUnloading                Code = 4     // cudaErrorCudartUnloading
	ProfilerDisabled               Code = 5     // cudaErrorProfilerDisabled
	ProfilerNotInitialized         Code = 6     // cudaErrorProfilerNotInitialized
	ProfilerAlreadyStarted         Code = 7     // cudaErrorProfilerAlreadyStarted
	ProfilerAlreadyStopped         Code = 8     // cudaErrorProfilerAlreadyStopped
	InvalidConfiguration           Code = 9     // cudaErrorInvalidConfiguration
	InvalidPitchValue              Code = 12    // cudaErrorInvalidPitchValue
	InvalidSymbol                  Code = 13    // cudaErrorInvalidSymbol
	InvalidHostPointer             Code = 16    // cudaErrorInvalidHostPointer
	InvalidDevicePointer           Code = 17    // cudaErrorInvalidDevicePointer
	InvalidTexture                 Code = 18    // cudaErrorInvalidTexture
	InvalidTextureBinding          Code = 19    // cudaErrorInvalidTextureBinding
	InvalidChannelDescriptor       Code = 20    // cudaErrorInvalidChannelDescriptor
	InvalidMemcpyDirection         Code = 21    // cudaErrorInvalidMemcpyDirection
	AddressOfConstant              Code = 22    // cudaErrorAddressOfConstant
	TextureFetchFailed             Code = 23    // cudaErrorTextureFetchFailed
	TextureNotBound                Code = 24    // cudaErrorTextureNotBound
	SynchronizationError           Code = 25    // cudaErrorSynchronizationError
	InvalidFilterSetting           Code = 26    // cudaErrorInvalidFilterSetting
	InvalidNormSetting             Code = 27    // cudaErrorInvalidNormSetting
	MixedDeviceExecution           Code = 28    // cudaErrorMixedDeviceExecution
	NotYetImplemented              Code = 31    // cudaErrorNotYetImplemented
	MemoryValueTooLarge            Code = 32    // cudaErrorMemoryValueTooLarge
	StubLibrary                    Code = 34    // cudaErrorStubLibrary
	InsufficientDriver             Code = 35    // cudaErrorInsufficientDriver
	CallRequiresNewerDriver        Code = 36    // cudaErrorCallRequiresNewerDriver
	InvalidSurface                 Code = 37    // cudaErrorInvalidSurface
	DuplicateVariableName          Code = 43    // cudaErrorDuplicateVariableName
	DuplicateTextureName           Code = 44    // cudaErrorDuplicateTextureName
	DuplicateSurfaceName           Code = 45    // cudaErrorDuplicateSurfaceName
	DevicesUnavailable             Code = 46    // cudaErrorDevicesUnavailable
	IncompatibleDriverContext      Code = 49    // cudaErrorIncompatibleDriverContext
	MissingConfiguration           Code = 52    // cudaErrorMissingConfiguration
	PriorLaunchFailure             Code = 53    // cudaErrorPriorLaunchFailure
	LaunchMaxDepthExceeded         Code = 65    // cudaErrorLaunchMaxDepthExceeded
	LaunchFileScopedTex            Code = 66    // cudaErrorLaunchFileScopedTex
	LaunchFileScopedSurf           Code = 67    // cudaErrorLaunchFileScopedSurf
	SyncDepthExceeded              Code = 68    // cudaErrorSyncDepthExceeded
	LaunchPendingCountExceeded     Code = 69    // cudaErrorLaunchPendingCountExceeded
	InvalidDeviceFunction          Code = 98    // cudaErrorInvalidDeviceFunction
	NoDevice                       Code = 100   // cudaErrorNoDevice
	InvalidDevice                  Code = 101   // cudaErrorInvalidDevice
	DeviceNotLicensed              Code = 102   // cudaErrorDeviceNotLicensed
	SoftwareValidityNotEstablished Code = 103   // cudaErrorSoftwareValidityNotEstablished
	StartupFailure                 Code = 127   // cudaErrorStartupFailure
	InvalidKernelImage             Code = 200   // cudaErrorInvalidKernelImage
	DeviceUninitialized            Code = 201   // cudaErrorDeviceUninitialized
	MapBufferObjectFailed          Code = 205   // cudaErrorMapBufferObjectFailed
	UnmapBufferObjectFailed        Code = 206   // cudaErrorUnmapBufferObjectFailed
	ArrayIsMapped                  Code = 207   // cudaErrorArrayIsMapped
	AlreadyMapped                  Code = 208   // cudaErrorAlreadyMapped
	NoKernelImageForDevice         Code = 209   // cudaErrorNoKernelImageForDevice
	AlreadyAcquired                Code = 210   // cudaErrorAlreadyAcquired
	NotMapped                      Code = 211   // cudaErrorNotMapped
	NotMappedAsArray               Code = 212   // cudaErrorNotMappedAsArray
	NotMappedAsPointer             Code = 213   // cudaErrorNotMappedAsPointer
	ECCUncorrectable               Code = 214   // cudaErrorECCUncorrectable
	UnsupportedLimit               Code = 215   // cudaErrorUnsupportedLimit
	DeviceAlreadyInUse             Code = 216   // cudaErrorDeviceAlreadyInUse
	PeerAccessUnsupported          Code = 217   // cudaErrorPeerAccessUnsupported
	InvalidPtx                     Code = 218   // cudaErrorInvalidPtx
	InvalidGraphicsContext         Code = 219   // cudaErrorInvalidGraphicsContext
	NvlinkUncorrectable            Code = 220   // cudaErrorNvlinkUncorrectable
	JitCompilerNotFound            Code = 221   // cudaErrorJitCompilerNotFound
	UnsupportedPtxVersion          Code = 222   // cudaErrorUnsupportedPtxVersion
	JitCompilationDisabled         Code = 223   // cudaErrorJitCompilationDisabled
	UnsupportedExecAffinity        Code = 224   // cudaErrorUnsupportedExecAffinity
	UnsupportedDevSideSync         Code = 225   // cudaErrorUnsupportedDevSideSync
	Contained                      Code = 226   // cudaErrorContained
	InvalidSource                  Code = 300   // cudaErrorInvalidSource
	FileNotFound                   Code = 301   // cudaErrorFileNotFound
	SharedObjectSymbolNotFound     Code = 302   // cudaErrorSharedObjectSymbolNotFound
	SharedObjectInitFailed         Code = 303   // cudaErrorSharedObjectInitFailed
	OperatingSystem                Code = 304   // cudaErrorOperatingSystem
	InvalidResourceHandle          Code = 400   // cudaErrorInvalidResourceHandle
	IllegalState                   Code = 401   // cudaErrorIllegalState
	LossyQuery                     Code = 402   // cudaErrorLossyQuery
	SymbolNotFound                 Code = 500   // cudaErrorSymbolNotFound
	NotReady                       Code = 600   // cudaErrorNotReady
	IllegalAddress                 Code = 700   // cudaErrorIllegalAddress
	LaunchOutOfResources           Code = 701   // cudaErrorLaunchOutOfResources
	LaunchTimeout                  Code = 702   // cudaErrorLaunchTimeout
	LaunchIncompatibleTexturing    Code = 703   // cudaErrorLaunchIncompatibleTexturing
	PeerAccessAlreadyEnabled       Code = 704   // cudaErrorPeerAccessAlreadyEnabled
	PeerAccessNotEnabled           Code = 705   // cudaErrorPeerAccessNotEnabled
	SetOnActiveProcess             Code = 708   // cudaErrorSetOnActiveProcess
	ContextIsDestroyed             Code = 709   // cudaErrorContextIsDestroyed
	Assert                         Code = 710   // cudaErrorAssert
	TooManyPeers                   Code = 711   // cudaErrorTooManyPeers
	HostMemoryAlreadyRegistered    Code = 712   // cudaErrorHostMemoryAlreadyRegistered
	HostMemoryNotRegistered        Code = 713   // cudaErrorHostMemoryNotRegistered
	HardwareStackError             Code = 714   // cudaErrorHardwareStackError
	IllegalInstruction             Code = 715   // cudaErrorIllegalInstruction
	MisalignedAddress              Code = 716   // cudaErrorMisalignedAddress
	InvalidAddressSpace            Code = 717   // cudaErrorInvalidAddressSpace
	InvalidPc                      Code = 718   // cudaErrorInvalidPc
	LaunchFailure                  Code = 719   // cudaErrorLaunchFailure
	CooperativeLaunchTooLarge      Code = 720   // cudaErrorCooperativeLaunchTooLarge
	TensorMemoryLeak               Code = 721   // cudaErrorTensorMemoryLeak
	NotPermitted                   Code = 800   // cudaErrorNotPermitted
	NotSupported                   Code = 801   // cudaErrorNotSupported
	SystemNotReady                 Code = 802   // cudaErrorSystemNotReady
	SystemDriverMismatch           Code = 803   // cudaErrorSystemDriverMismatch
	CompatNotSupportedOnDevice     Code = 804   // cudaErrorCompatNotSupportedOnDevice
	MpsConnectionFailed            Code = 805   // cudaErrorMpsConnectionFailed
	MpsRpcFailure                  Code = 806   // cudaErrorMpsRpcFailure
	MpsServerNotReady              Code = 807   // cudaErrorMpsServerNotReady
	MpsMaxClientsReached           Code = 808   // cudaErrorMpsMaxClientsReached
	MpsMaxConnectionsReached       Code = 809   // cudaErrorMpsMaxConnectionsReached
	MpsClientTerminated            Code = 810   // cudaErrorMpsClientTerminated
	CdpNotSupported                Code = 811   // cudaErrorCdpNotSupported
	CdpVersionMismatch             Code = 812   // cudaErrorCdpVersionMismatch
	StreamCaptureUnsupported       Code = 900   // cudaErrorStreamCaptureUnsupported
	StreamCaptureInvalidated       Code = 901   // cudaErrorStreamCaptureInvalidated
	StreamCaptureMerge             Code = 902   // cudaErrorStreamCaptureMerge
	StreamCaptureUnmatched         Code = 903   // cudaErrorStreamCaptureUnmatched
	StreamCaptureUnjoined          Code = 904   // cudaErrorStreamCaptureUnjoined
	StreamCaptureIsolation         Code = 905   // cudaErrorStreamCaptureIsolation
	StreamCaptureImplicit          Code = 906   // cudaErrorStreamCaptureImplicit
	CapturedEvent                  Code = 907   // cudaErrorCapturedEvent
	StreamCaptureWrongThread       Code = 908   // cudaErrorStreamCaptureWrongThread
	Timeout                        Code = 909   // cudaErrorTimeout
	GraphExecUpdateFailure         Code = 910   // cudaErrorGraphExecUpdateFailure
	ExternalDevice                 Code = 911   // cudaErrorExternalDevice
	InvalidClusterSize             Code = 912   // cudaErrorInvalidClusterSize
	FunctionNotLoaded              Code = 913   // cudaErrorFunctionNotLoaded
	InvalidResourceType            Code = 914   // cudaErrorInvalidResourceType
	InvalidResourceConfiguration   Code = 915   // cudaErrorInvalidResourceConfiguration
	Unknown                        Code = 999   // cudaErrorUnknown
	APIFailureBase                 Code = 10000 // cudaErrorApiFailureBase (deprecated)
)

var names = map[Code]string{
	Success:                        "cudaSuccess",
	InvalidValue:                   "cudaErrorInvalidValue",
	MemoryAllocation:               "cudaErrorMemoryAllocation",
	InitializationError:            "cudaErrorInitializationError",
	CudartUnloading:                "cudaErrorCudartUnloading",
	ProfilerDisabled:               "cudaErrorProfilerDisabled",
	ProfilerNotInitialized:         "cudaErrorProfilerNotInitialized",
	ProfilerAlreadyStarted:         "cudaErrorProfilerAlreadyStarted",
	ProfilerAlreadyStopped:         "cudaErrorProfilerAlreadyStopped",
	InvalidConfiguration:           "cudaErrorInvalidConfiguration",
	InvalidPitchValue:              "cudaErrorInvalidPitchValue",
	InvalidSymbol:                  "cudaErrorInvalidSymbol",
	InvalidHostPointer:             "cudaErrorInvalidHostPointer",
	InvalidDevicePointer:           "cudaErrorInvalidDevicePointer",
	InvalidTexture:                 "cudaErrorInvalidTexture",
	InvalidTextureBinding:          "cudaErrorInvalidTextureBinding",
	InvalidChannelDescriptor:       "cudaErrorInvalidChannelDescriptor",
	InvalidMemcpyDirection:         "cudaErrorInvalidMemcpyDirection",
	AddressOfConstant:              "cudaErrorAddressOfConstant",
	TextureFetchFailed:             "cudaErrorTextureFetchFailed",
	TextureNotBound:                "cudaErrorTextureNotBound",
	SynchronizationError:           "cudaErrorSynchronizationError",
	InvalidFilterSetting:           "cudaErrorInvalidFilterSetting",
	InvalidNormSetting:             "cudaErrorInvalidNormSetting",
	MixedDeviceExecution:           "cudaErrorMixedDeviceExecution",
	NotYetImplemented:              "cudaErrorNotYetImplemented",
	MemoryValueTooLarge:            "cudaErrorMemoryValueTooLarge",
	StubLibrary:                    "cudaErrorStubLibrary",
	InsufficientDriver:             "cudaErrorInsufficientDriver",
	CallRequiresNewerDriver:        "cudaErrorCallRequiresNewerDriver",
	InvalidSurface:                 "cudaErrorInvalidSurface",
	DuplicateVariableName:          "cudaErrorDuplicateVariableName",
	DuplicateTextureName:           "cudaErrorDuplicateTextureName",
	DuplicateSurfaceName:           "cudaErrorDuplicateSurfaceName",
	DevicesUnavailable:             "cudaErrorDevicesUnavailable",
	IncompatibleDriverContext:      "cudaErrorIncompatibleDriverContext",
	MissingConfiguration:           "cudaErrorMissingConfiguration",
	PriorLaunchFailure:             "cudaErrorPriorLaunchFailure",
	LaunchMaxDepthExceeded:         "cudaErrorLaunchMaxDepthExceeded",
	LaunchFileScopedTex:            "cudaErrorLaunchFileScopedTex",
	LaunchFileScopedSurf:           "cudaErrorLaunchFileScopedSurf",
	SyncDepthExceeded:              "cudaErrorSyncDepthExceeded",
	LaunchPendingCountExceeded:     "cudaErrorLaunchPendingCountExceeded",
	InvalidDeviceFunction:          "cudaErrorInvalidDeviceFunction",
	NoDevice:                       "cudaErrorNoDevice",
	InvalidDevice:                  "cudaErrorInvalidDevice",
	DeviceNotLicensed:              "cudaErrorDeviceNotLicensed",
	SoftwareValidityNotEstablished: "cudaErrorSoftwareValidityNotEstablished",
	StartupFailure:                 "cudaErrorStartupFailure",
	InvalidKernelImage:             "cudaErrorInvalidKernelImage",
	DeviceUninitialized:            "cudaErrorDeviceUninitialized",
	MapBufferObjectFailed:          "cudaErrorMapBufferObjectFailed",
	UnmapBufferObjectFailed:        "cudaErrorUnmapBufferObjectFailed",
	ArrayIsMapped:                  "cudaErrorArrayIsMapped",
	AlreadyMapped:                  "cudaErrorAlreadyMapped",
	NoKernelImageForDevice:         "cudaErrorNoKernelImageForDevice",
	AlreadyAcquired:                "cudaErrorAlreadyAcquired",
	NotMapped:                      "cudaErrorNotMapped",
	NotMappedAsArray:               "cudaErrorNotMappedAsArray",
	NotMappedAsPointer:             "cudaErrorNotMappedAsPointer",
	ECCUncorrectable:               "cudaErrorECCUncorrectable",
	UnsupportedLimit:               "cudaErrorUnsupportedLimit",
	DeviceAlreadyInUse:             "cudaErrorDeviceAlreadyInUse",
	PeerAccessUnsupported:          "cudaErrorPeerAccessUnsupported",
	InvalidPtx:                     "cudaErrorInvalidPtx",
	InvalidGraphicsContext:         "cudaErrorInvalidGraphicsContext",
	NvlinkUncorrectable:            "cudaErrorNvlinkUncorrectable",
	JitCompilerNotFound:            "cudaErrorJitCompilerNotFound",
	UnsupportedPtxVersion:          "cudaErrorUnsupportedPtxVersion",
	JitCompilationDisabled:         "cudaErrorJitCompilationDisabled",
	UnsupportedExecAffinity:        "cudaErrorUnsupportedExecAffinity",
	UnsupportedDevSideSync:         "cudaErrorUnsupportedDevSideSync",
	Contained:                      "cudaErrorContained",
	InvalidSource:                  "cudaErrorInvalidSource",
	FileNotFound:                   "cudaErrorFileNotFound",
	SharedObjectSymbolNotFound:     "cudaErrorSharedObjectSymbolNotFound",
	SharedObjectInitFailed:         "cudaErrorSharedObjectInitFailed",
	OperatingSystem:                "cudaErrorOperatingSystem",
	InvalidResourceHandle:          "cudaErrorInvalidResourceHandle",
	IllegalState:                   "cudaErrorIllegalState",
	LossyQuery:                     "cudaErrorLossyQuery",
	SymbolNotFound:                 "cudaErrorSymbolNotFound",
	NotReady:                       "cudaErrorNotReady",
	IllegalAddress:                 "cudaErrorIllegalAddress",
	LaunchOutOfResources:           "cudaErrorLaunchOutOfResources",
	LaunchTimeout:                  "cudaErrorLaunchTimeout",
	LaunchIncompatibleTexturing:    "cudaErrorLaunchIncompatibleTexturing",
	PeerAccessAlreadyEnabled:       "cudaErrorPeerAccessAlreadyEnabled",
	PeerAccessNotEnabled:           "cudaErrorPeerAccessNotEnabled",
	SetOnActiveProcess:             "cudaErrorSetOnActiveProcess",
	ContextIsDestroyed:             "cudaErrorContextIsDestroyed",
	Assert:                         "cudaErrorAssert",
	TooManyPeers:                   "cudaErrorTooManyPeers",
	HostMemoryAlreadyRegistered:    "cudaErrorHostMemoryAlreadyRegistered",
	HostMemoryNotRegistered:        "cudaErrorHostMemoryNotRegistered",
	HardwareStackError:             "cudaErrorHardwareStackError",
	IllegalInstruction:             "cudaErrorIllegalInstruction",
	MisalignedAddress:              "cudaErrorMisalignedAddress",
	InvalidAddressSpace:            "cudaErrorInvalidAddressSpace",
	InvalidPc:                      "cudaErrorInvalidPc",
	LaunchFailure:                  "cudaErrorLaunchFailure",
	CooperativeLaunchTooLarge:      "cudaErrorCooperativeLaunchTooLarge",
	TensorMemoryLeak:               "cudaErrorTensorMemoryLeak",
	NotPermitted:                   "cudaErrorNotPermitted",
	NotSupported:                   "cudaErrorNotSupported",
	SystemNotReady:                 "cudaErrorSystemNotReady",
	SystemDriverMismatch:           "cudaErrorSystemDriverMismatch",
	CompatNotSupportedOnDevice:     "cudaErrorCompatNotSupportedOnDevice",
	MpsConnectionFailed:            "cudaErrorMpsConnectionFailed",
	MpsRpcFailure:                  "cudaErrorMpsRpcFailure",
	MpsServerNotReady:              "cudaErrorMpsServerNotReady",
	MpsMaxClientsReached:           "cudaErrorMpsMaxClientsReached",
	MpsMaxConnectionsReached:       "cudaErrorMpsMaxConnectionsReached",
	MpsClientTerminated:            "cudaErrorMpsClientTerminated",
	CdpNotSupported:                "cudaErrorCdpNotSupported",
	CdpVersionMismatch:             "cudaErrorCdpVersionMismatch",
	StreamCaptureUnsupported:       "cudaErrorStreamCaptureUnsupported",
	StreamCaptureInvalidated:       "cudaErrorStreamCaptureInvalidated",
	StreamCaptureMerge:             "cudaErrorStreamCaptureMerge",
	StreamCaptureUnmatched:         "cudaErrorStreamCaptureUnmatched",
	StreamCaptureUnjoined:          "cudaErrorStreamCaptureUnjoined",
	StreamCaptureIsolation:         "cudaErrorStreamCaptureIsolation",
	StreamCaptureImplicit:          "cudaErrorStreamCaptureImplicit",
	CapturedEvent:                  "cudaErrorCapturedEvent",
	StreamCaptureWrongThread:       "cudaErrorStreamCaptureWrongThread",
	Timeout:                        "cudaErrorTimeout",
	GraphExecUpdateFailure:         "cudaErrorGraphExecUpdateFailure",
	ExternalDevice:                 "cudaErrorExternalDevice",
	InvalidClusterSize:             "cudaErrorInvalidClusterSize",
	FunctionNotLoaded:              "cudaErrorFunctionNotLoaded",
	InvalidResourceType:            "cudaErrorInvalidResourceType",
	InvalidResourceConfiguration:   "cudaErrorInvalidResourceConfiguration",
	Unknown:                        "cudaErrorUnknown",
	APIFailureBase:                 "cudaErrorApiFailureBase",
}
