package backend

import "unsafe"

// Graph is an opaque cudaGraph_t handle.
type Graph uintptr

// GraphExec is an opaque cudaGraphExec_t handle (an instantiated graph).
type GraphExec uintptr

// GraphNode is an opaque cudaGraphNode_t handle.
type GraphNode uintptr

// CaptureMode is a cudaStreamCaptureMode.
type CaptureMode int32

// Stream capture modes (values as in every runtime from 11.4 to 13.0).
const (
	CaptureGlobal      CaptureMode = 0
	CaptureThreadLocal CaptureMode = 1
	CaptureRelaxed     CaptureMode = 2
)

// CaptureStatus is a cudaStreamCaptureStatus.
type CaptureStatus int32

// Capture states.
const (
	CaptureNone        CaptureStatus = 0
	CaptureActive      CaptureStatus = 1
	CaptureInvalidated CaptureStatus = 2
)

// CaptureInfo is what cudaStreamGetCaptureInfo reports about a stream.
type CaptureInfo struct {
	Status CaptureStatus
	ID     uint64      // unique per capture sequence; 0 when not capturing
	Graph  Graph       // the graph being built; 0 when not capturing
	Deps   []GraphNode // the nodes the next captured op will depend on
}

// NodeType is a cudaGraphNodeType.
type NodeType int32

// Graph node types (values as in the runtime).
const (
	NodeKernel      NodeType = 0
	NodeMemcpy      NodeType = 1
	NodeMemset      NodeType = 2
	NodeHost        NodeType = 3
	NodeGraph       NodeType = 4
	NodeEmpty       NodeType = 5
	NodeWaitEvent   NodeType = 6
	NodeEventRecord NodeType = 7
	NodeMemAlloc    NodeType = 10
	NodeMemFree     NodeType = 11
)

// String names the node type.
func (t NodeType) String() string {
	switch t {
	case NodeKernel:
		return "kernel"
	case NodeMemcpy:
		return "memcpy"
	case NodeMemset:
		return "memset"
	case NodeHost:
		return "host"
	case NodeGraph:
		return "graph"
	case NodeEmpty:
		return "empty"
	case NodeWaitEvent:
		return "event-wait"
	case NodeEventRecord:
		return "event-record"
	case NodeMemAlloc:
		return "mem-alloc"
	case NodeMemFree:
		return "mem-free"
	case NodeConditional:
		return "conditional"
	case NodeExtSemasSignal:
		return "ext-semaphore-signal"
	case NodeExtSemasWait:
		return "ext-semaphore-wait"
	}
	return "other"
}

// cudaGraphInstantiateFlags.
const (
	InstantiateAutoFreeOnLaunch uint64 = 1
	InstantiateUpload           uint64 = 2
	InstantiateDeviceLaunch     uint64 = 4
	InstantiateUseNodePriority  uint64 = 8
)

// UpdateResult is a cudaGraphExecUpdateResult.
type UpdateResult int32

// Whole-graph update outcomes.
const (
	UpdateSuccess                   UpdateResult = 0
	UpdateError                     UpdateResult = 1
	UpdateTopologyChanged           UpdateResult = 2
	UpdateNodeTypeChanged           UpdateResult = 3
	UpdateFunctionChanged           UpdateResult = 4
	UpdateParametersChanged         UpdateResult = 5
	UpdateNotSupported              UpdateResult = 6
	UpdateUnsupportedFunctionChange UpdateResult = 7
	UpdateAttributesChanged         UpdateResult = 8
)

// String says what the outcome means.
func (r UpdateResult) String() string {
	switch r {
	case UpdateSuccess:
		return "success"
	case UpdateTopologyChanged:
		return "the graph's topology changed"
	case UpdateNodeTypeChanged:
		return "a node's type changed"
	case UpdateFunctionChanged, UpdateUnsupportedFunctionChange:
		return "a kernel node's function changed"
	case UpdateParametersChanged:
		return "a node's parameters changed in a way that cannot be updated"
	case UpdateNotSupported:
		return "a node does not support updates"
	case UpdateAttributesChanged:
		return "a node's attributes changed in a way that cannot be updated"
	}
	return "the update failed"
}

// UpdateInfo is cudaGraphExecUpdate's result info.
type UpdateInfo struct {
	Result    UpdateResult
	ErrorNode GraphNode // the node of the new graph that failed, when known
	FromNode  GraphNode // the node of the instantiated graph it was matched with, when known
}

// KernelNode is a kernel node's parameters.
type KernelNode struct {
	Kernel      Kernel
	Grid, Block Dim3
	SharedMem   uint32
	Args        []Arg
	// Attrs are the node's launch attributes, set when the node is added
	// (cudaGraphKernelNodeSetAttribute); GraphExecKernelNodeSetParams keeps the node's.
	Attrs LaunchAttrs
}

// GraphDevice is the graph part of the runtime API (cudaStreamBeginCapture, cudaGraph*), scoped
// to one device and called from its actor's thread only. Host functions given to a graph run
// once per launch, on a thread the backend owns, and must not call the backend.
type GraphDevice interface {
	GraphTopologyDevice
	GraphInstantiateDevice
	GraphMemDevice
	GraphUserObjectDevice
	GraphConditionals
	GraphParamsDevice // per-kind node parameters (graph_params.go)
	GraphKernelParamsDevice
	GraphCopy3DDevice
	GraphExternalSemaphoreDevice

	// StreamBeginCapture starts capturing s into a new graph.
	StreamBeginCapture(s Stream, mode CaptureMode) error
	// StreamEndCapture ends the capture begun on s and returns the graph (whose ownership
	// passes to the caller). An invalidated capture fails, and its graph is discarded.
	StreamEndCapture(s Stream) (Graph, error)
	// StreamCaptureInfo reports whether s is capturing, into which graph, after which nodes.
	StreamCaptureInfo(s Stream) (CaptureInfo, error)

	// GraphCreate makes an empty graph.
	GraphCreate() (Graph, error)
	// GraphDestroy destroys a graph and its nodes; instantiated graphs stay valid.
	GraphDestroy(g Graph) error
	// GraphClone copies a graph.
	GraphClone(g Graph) (Graph, error)
	// GraphNodes lists g's nodes.
	GraphNodes(g Graph) ([]GraphNode, error)
	// GraphRootNodes lists g's nodes without dependencies.
	GraphRootNodes(g Graph) ([]GraphNode, error)
	// GraphEdges lists g's edges as parallel from/to lists.
	GraphEdges(g Graph) (from, to []GraphNode, err error)
	// GraphNodeType is a node's type.
	GraphNodeType(n GraphNode) (NodeType, error)
	// GraphAddDependencies adds the edges from[i] → to[i].
	GraphAddDependencies(g Graph, from, to []GraphNode) error
	// GraphDebugDot writes g in Graphviz DOT to the file at path.
	GraphDebugDot(g Graph, path string) error

	// GraphAddKernelNode adds a kernel launch after deps.
	GraphAddKernelNode(g Graph, deps []GraphNode, p KernelNode) (GraphNode, error)
	// GraphAddCopyHtoD adds a copy of n bytes of host memory (pinned, alive while the graph
	// may run) to the device after deps.
	GraphAddCopyHtoD(g Graph, deps []GraphNode, dst DevicePtr, src unsafe.Pointer, n uint64) (GraphNode, error)
	// GraphAddCopyDtoH adds a copy of n bytes from the device to host memory (pinned, alive
	// while the graph may run) after deps.
	GraphAddCopyDtoH(g Graph, deps []GraphNode, dst unsafe.Pointer, src DevicePtr, n uint64) (GraphNode, error)
	// GraphAddCopyDtoD adds a copy of n bytes between device addresses after deps.
	GraphAddCopyDtoD(g Graph, deps []GraphNode, dst, src DevicePtr, n uint64) (GraphNode, error)
	// GraphAddMemsetNode adds setting n bytes at p to value after deps.
	GraphAddMemsetNode(g Graph, deps []GraphNode, p DevicePtr, value byte, n uint64) (GraphNode, error)
	// GraphAddHostNode adds a host function, run at every launch of the graph, after deps.
	GraphAddHostNode(g Graph, deps []GraphNode, fn func()) (GraphNode, error)
	// GraphAddChildNode adds a copy of child as one node after deps.
	GraphAddChildNode(g Graph, deps []GraphNode, child Graph) (GraphNode, error)
	// GraphAddEmptyNode adds a node that does nothing, to join dependencies.
	GraphAddEmptyNode(g Graph, deps []GraphNode) (GraphNode, error)
	// GraphAddEventRecordNode adds recording e after deps.
	GraphAddEventRecordNode(g Graph, deps []GraphNode, e Event) (GraphNode, error)
	// GraphAddEventWaitNode adds waiting for e after deps.
	GraphAddEventWaitNode(g Graph, deps []GraphNode, e Event) (GraphNode, error)
	// GraphAddMemAllocNode adds an allocation of size bytes of device memory after deps and
	// returns its address, fixed for the graph's life.
	GraphAddMemAllocNode(g Graph, deps []GraphNode, size uint64) (GraphNode, DevicePtr, error)
	// GraphAddMemFreeNode adds freeing p (from a mem-alloc node) after deps.
	GraphAddMemFreeNode(g Graph, deps []GraphNode, p DevicePtr) (GraphNode, error)

	// GraphInstantiate makes an executable graph (flags: Instantiate*).
	GraphInstantiate(g Graph, flags uint64) (GraphExec, error)
	// GraphExecDestroy destroys an executable graph.
	GraphExecDestroy(x GraphExec) error
	// GraphUpload uploads x's resources to the device, ordered on s.
	GraphUpload(x GraphExec, s Stream) error
	// GraphLaunch enqueues one run of x on s.
	//remote:posted
	GraphLaunch(x GraphExec, s Stream) error
	// GraphLaunchN enqueues n runs of x on s, back to back, as n GraphLaunch calls would, and
	// returns how many were queued: n, or those before the first launch refused, with that
	// launch's error.
	//remote:inline
	GraphLaunchN(x GraphExec, s Stream, n int) (int, error)
	// GraphExecKernelNodeSetParams changes the parameters of kernel node n (of the graph x was
	// instantiated from) for x's later launches.
	GraphExecKernelNodeSetParams(x GraphExec, n GraphNode, p KernelNode) error
	// GraphNodeSetEnabled enables or disables node n in x.
	GraphNodeSetEnabled(x GraphExec, n GraphNode, enabled bool) error
	// GraphExecUpdate updates x to g's node parameters; g must have x's topology. On failure
	// info says why.
	//remote:inline
	GraphExecUpdate(x GraphExec, g Graph) (UpdateInfo, error)
}
