package backend

// Node types of external semaphore nodes (values as in the runtime).
const (
	NodeExtSemasSignal NodeType = 8 // cudaGraphNodeTypeExtSemaphoreSignal
	NodeExtSemasWait   NodeType = 9 // cudaGraphNodeTypeExtSemaphoreWait
)

// SemaphoreOp is one semaphore of an external semaphore node: signalled to Value, or waited
// for until it reaches Value (a timeline semaphore's fence value; a binary semaphore ignores
// it).
type SemaphoreOp struct {
	Sem   ExternalSemaphore
	Value uint64
}

// GraphExternalSemaphoreDevice is the external semaphore nodes of graphs
// (cudaGraphAddExternalSemaphoresSignalNode/WaitNode, their get and set calls and
// cudaGraphExecExternalSemaphores*NodeSetParams): a node signals, or waits for, every
// semaphore of its list when it runs. The simulator has no external semaphores (see
// ExternalDevice) and refuses them all with cudaerr.NotSupported.
type GraphExternalSemaphoreDevice interface {
	// GraphAddExternalSemaphoresSignalNode adds signalling ops after deps.
	GraphAddExternalSemaphoresSignalNode(g Graph, deps []GraphNode, ops []SemaphoreOp) (GraphNode, error)
	// GraphAddExternalSemaphoresWaitNode adds waiting for ops after deps.
	GraphAddExternalSemaphoresWaitNode(g Graph, deps []GraphNode, ops []SemaphoreOp) (GraphNode, error)
	// GraphExternalSemaphoresSignalNodeGetParams is signal node n's list.
	GraphExternalSemaphoresSignalNodeGetParams(n GraphNode) ([]SemaphoreOp, error)
	// GraphExternalSemaphoresSignalNodeSetParams makes signal node n signal ops.
	GraphExternalSemaphoresSignalNodeSetParams(n GraphNode, ops []SemaphoreOp) error
	// GraphExternalSemaphoresWaitNodeGetParams is wait node n's list.
	GraphExternalSemaphoresWaitNodeGetParams(n GraphNode) ([]SemaphoreOp, error)
	// GraphExternalSemaphoresWaitNodeSetParams makes wait node n wait for ops.
	GraphExternalSemaphoresWaitNodeSetParams(n GraphNode, ops []SemaphoreOp) error
	// GraphExecExternalSemaphoresSignalNodeSetParams makes signal node n of x signal ops in
	// x's later launches.
	GraphExecExternalSemaphoresSignalNodeSetParams(x GraphExec, n GraphNode, ops []SemaphoreOp) error
	// GraphExecExternalSemaphoresWaitNodeSetParams makes wait node n of x wait for ops in
	// x's later launches.
	GraphExecExternalSemaphoresWaitNodeSetParams(x GraphExec, n GraphNode, ops []SemaphoreOp) error
}
