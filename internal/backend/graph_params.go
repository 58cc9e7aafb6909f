package backend

// CopyKind is a cudaMemcpyKind: which sides of a copy node are host memory.
type CopyKind int32

// Copy kinds (values as in the runtime). CopyDefault infers the sides from the addresses
// (unified addressing): the kind of copies between two devices' memory.
const (
	CopyHostToHost     CopyKind = 0
	CopyHostToDevice   CopyKind = 1
	CopyDeviceToHost   CopyKind = 2
	CopyDeviceToDevice CopyKind = 3
	CopyDefault        CopyKind = 4
)

// CopyNode is a 1D copy node's parameters: Bytes bytes from Src to Dst. Addresses are as the
// runtime holds them: device addresses (of any device, with CopyDefault), or pinned host
// addresses on the host side of CopyHostToDevice and CopyDeviceToHost.
type CopyNode struct {
	Dst, Src uint64
	Bytes    uint64
	Kind     CopyKind
}

// MemsetNode is a memset node's parameters (cudaMemsetParams): Height rows of Width elements
// of ElementSize bytes (1, 2 or 4), rows Pitch bytes apart, each element set to Value.
type MemsetNode struct {
	Dst         DevicePtr
	Pitch       uint64
	Value       uint32
	ElementSize uint32
	Width       uint64
	Height      uint64
}

// AllocNode is what a mem-alloc node allocates (cudaMemAllocNodeParams): Bytes bytes on
// device Device, at Ptr for the graph's life.
type AllocNode struct {
	Ptr    DevicePtr
	Bytes  uint64
	Device int
}

// GraphParamsDevice reads and changes the parameters of one node of a graph, by node kind
// (cudaGraph*NodeGetParams/SetParams and the event and child accessors), and of the node in an
// executable graph made from it (cudaGraphExec*NodeSetParams). A node of the wrong kind is
// refused with cudaerr.InvalidValue and changes nothing.
type GraphParamsDevice interface {
	// GraphAddMemcpyNode1D adds the 1D copy p after deps (cudaGraphAddMemcpyNode1D with p's
	// kind): with CopyDefault, between two devices' memory where unified addressing tells
	// them apart.
	GraphAddMemcpyNode1D(g Graph, deps []GraphNode, p CopyNode) (GraphNode, error)
	// GraphKernelNodeSetParams changes kernel node n's kernel, shape and arguments; its launch
	// attributes stay.
	GraphKernelNodeSetParams(n GraphNode, p KernelNode) error
	// GraphKernelNodeGetAttrs is kernel node n's launch attributes (ProgrammaticEvent is not
	// read and stays 0).
	GraphKernelNodeGetAttrs(n GraphNode) (LaunchAttrs, error)
	// GraphKernelNodeSetAttrs sets on kernel node n each attribute a gives (its non-zero
	// fields); the node's other attributes keep their values.
	GraphKernelNodeSetAttrs(n GraphNode, a LaunchAttrs) error
	// GraphKernelNodeCopyAttributes gives kernel node dst the launch attributes of kernel
	// node src.
	GraphKernelNodeCopyAttributes(dst, src GraphNode) error

	// GraphMemcpyNodeGetParams is copy node n's parameters. A copy node that is not 1D (3D,
	// or of arrays) is refused with cudaerr.NotSupported.
	GraphMemcpyNodeGetParams(n GraphNode) (CopyNode, error)
	// GraphMemcpyNodeSetParams1D makes copy node n a 1D copy of p.
	GraphMemcpyNodeSetParams1D(n GraphNode, p CopyNode) error
	// GraphExecMemcpyNodeSetParams1D makes copy node n of x a 1D copy of p for x's later
	// launches; the memory must be of the device the node's copy was on.
	GraphExecMemcpyNodeSetParams1D(x GraphExec, n GraphNode, p CopyNode) error

	// GraphMemsetNodeGetParams is memset node n's parameters.
	GraphMemsetNodeGetParams(n GraphNode) (MemsetNode, error)
	// GraphMemsetNodeSetParams changes memset node n.
	GraphMemsetNodeSetParams(n GraphNode, p MemsetNode) error
	// GraphExecMemsetNodeSetParams changes memset node n of x for x's later launches.
	GraphExecMemsetNodeSetParams(x GraphExec, n GraphNode, p MemsetNode) error

	// GraphHostNodeSetParams makes host node n of g call fn at every launch; g is the graph
	// holding n, which keeps fn (and no longer the node's old function) alive.
	GraphHostNodeSetParams(g Graph, n GraphNode, fn func()) error
	// GraphExecHostNodeSetParams makes host node n of x call fn in x's later launches.
	GraphExecHostNodeSetParams(x GraphExec, n GraphNode, fn func()) error

	// GraphChildGraphNodeGetGraph is the graph child node n embeds: owned by the node, valid
	// while the node is, never destroyed by the caller; changes to it change the node.
	GraphChildGraphNodeGetGraph(n GraphNode) (Graph, error)
	// GraphExecChildGraphNodeSetParams takes child's node parameters into child node n of x;
	// child must have the topology of the graph the node embeds.
	GraphExecChildGraphNodeSetParams(x GraphExec, n GraphNode, child Graph) error

	// GraphEventRecordNodeGetEvent is the event record node n records.
	GraphEventRecordNodeGetEvent(n GraphNode) (Event, error)
	// GraphEventRecordNodeSetEvent makes record node n record e.
	GraphEventRecordNodeSetEvent(n GraphNode, e Event) error
	// GraphEventWaitNodeGetEvent is the event wait node n waits for.
	GraphEventWaitNodeGetEvent(n GraphNode) (Event, error)
	// GraphEventWaitNodeSetEvent makes wait node n wait for e.
	GraphEventWaitNodeSetEvent(n GraphNode, e Event) error
	// GraphExecEventRecordNodeSetEvent makes record node n of x record e in later launches.
	GraphExecEventRecordNodeSetEvent(x GraphExec, n GraphNode, e Event) error
	// GraphExecEventWaitNodeSetEvent makes wait node n of x wait for e in later launches.
	GraphExecEventWaitNodeSetEvent(x GraphExec, n GraphNode, e Event) error

	// GraphMemAllocNodeGetParams is what mem-alloc node n allocates.
	GraphMemAllocNodeGetParams(n GraphNode) (AllocNode, error)
	// GraphMemFreeNodeGetParams is the address mem-free node n frees.
	GraphMemFreeNodeGetParams(n GraphNode) (DevicePtr, error)
}
