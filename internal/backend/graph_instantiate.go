package backend

// InstantiateResult is a cudaGraphInstantiateResult: why an instantiation failed.
type InstantiateResult int32

// Instantiation outcomes (values as in the runtime).
const (
	InstantiateSuccess                     InstantiateResult = 0
	InstantiateError                       InstantiateResult = 1
	InstantiateInvalidStructure            InstantiateResult = 2
	InstantiateNodeOperationNotSupported   InstantiateResult = 3
	InstantiateMultipleDevicesNotSupported InstantiateResult = 4
	InstantiateConditionalHandleUnused     InstantiateResult = 5
)

// String says what the outcome means.
func (r InstantiateResult) String() string {
	switch r {
	case InstantiateSuccess:
		return "success"
	case InstantiateInvalidStructure:
		return "the graph's structure is invalid (a cycle?)"
	case InstantiateNodeOperationNotSupported:
		return "a node's operation is not supported by a device-launchable graph"
	case InstantiateMultipleDevicesNotSupported:
		return "a device-launchable graph may not hold nodes of several devices"
	case InstantiateConditionalHandleUnused:
		return "a conditional handle is not used by any conditional node"
	}
	return "the instantiation failed"
}

// InstantiateInfo is what cudaGraphInstantiateWithParams reports besides its error.
type InstantiateInfo struct {
	Result    InstantiateResult
	ErrorNode GraphNode // the node that made it fail, when known
}

// cudaGraphDebugDotFlags.
const (
	DotVerbose                  uint32 = 1 << 0
	DotKernelNodeParams         uint32 = 1 << 2
	DotMemcpyNodeParams         uint32 = 1 << 3
	DotMemsetNodeParams         uint32 = 1 << 4
	DotHostNodeParams           uint32 = 1 << 5
	DotEventNodeParams          uint32 = 1 << 6
	DotExtSemasSignalNodeParams uint32 = 1 << 7
	DotExtSemasWaitNodeParams   uint32 = 1 << 8
	DotKernelNodeAttributes     uint32 = 1 << 9
	DotHandles                  uint32 = 1 << 10
	DotConditionalNodeParams    uint32 = 1 << 15
	// DotAll is every flag above.
	DotAll = DotVerbose | DotKernelNodeParams | DotMemcpyNodeParams | DotMemsetNodeParams | DotHostNodeParams |
		DotEventNodeParams | DotExtSemasSignalNodeParams | DotExtSemasWaitNodeParams | DotKernelNodeAttributes |
		DotHandles | DotConditionalNodeParams
)

// GraphInstantiateDevice is instantiation with parameters and what an executable graph
// reports about itself. Actor thread only, as GraphDevice.
type GraphInstantiateDevice interface {
	// GraphInstantiateWithParams makes an executable graph of g (flags: Instantiate*),
	// uploading it on upload when flags has InstantiateUpload. On failure info says why and
	// at which node (cudaGraphInstantiateWithParams).
	//remote:inline
	GraphInstantiateWithParams(g Graph, flags uint64, upload Stream) (GraphExec, InstantiateInfo, error)
	// GraphExecFlags is the flags x was instantiated with (cudaGraphExecGetFlags).
	GraphExecFlags(x GraphExec) (uint64, error)
	// GraphDebugDotFlags writes g in Graphviz DOT to the file at path, with the detail flags
	// asks for (Dot*; cudaGraphDebugDotPrint).
	GraphDebugDotFlags(g Graph, path string, flags uint32) error
}
