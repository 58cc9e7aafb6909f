package backend

import "github.com/gpuactor/gpuactor/cuda"

// ConditionalHandle is a cudaGraphConditionalHandle.
type ConditionalHandle = cuda.ConditionalHandle

// NodeConditional is cudaGraphNodeTypeConditional.
const NodeConditional NodeType = 13

// CondType is a cudaGraphConditionalNodeType.
type CondType int32

// Conditional node types (values as in the runtime, 12.3+; if/else and switch 12.8+).
const (
	CondIf     CondType = 0
	CondWhile  CondType = 1
	CondSwitch CondType = 2
)

// String names the conditional type.
func (t CondType) String() string {
	switch t {
	case CondIf:
		return "if"
	case CondWhile:
		return "while"
	case CondSwitch:
		return "switch"
	}
	return "unknown"
}

// CondAssignDefault is cudaGraphCondAssignDefault: the handle takes its default value at the
// start of every launch of the graph.
const CondAssignDefault uint32 = 1

// ConditionalNode is a conditional node's parameters (cudaConditionalNodeParams less its
// output array, which GraphAddNode returns).
type ConditionalNode struct {
	Handle ConditionalHandle
	Type   CondType
	Size   uint32 // bodies: 1 for while, 1 or 2 for if, n > 0 for switch
}

// NodeParams is cudaGraphNodeParams for the node kinds the generic calls take here: Type
// says which of the fields is read (NodeKernel, NodeMemset, NodeEmpty, NodeConditional).
type NodeParams struct {
	Type        NodeType
	Kernel      KernelNode
	Memset      MemsetNode
	Conditional ConditionalNode
}

// GraphConditionals is the conditional-node and generic-node part of the graph API
// (cudaGraphConditionalHandleCreate, cudaGraphAddNode, cudaGraphNodeSetParams,
// cudaGraphExecNodeSetParams, cudaStreamBeginCaptureToGraph). Runtimes before 12.3 lack it: the
// calls fail naming the missing symbol.
type GraphConditionals interface {
	// GraphConditionalHandleCreate makes a conditional variable of g, with defaultValue applied
	// at the start of every launch when flags has CondAssignDefault.
	GraphConditionalHandleCreate(g Graph, defaultValue, flags uint32) (ConditionalHandle, error)
	// GraphAddNode adds a node of p.Type after deps. For a conditional node it also returns
	// the node's body graphs (p.Conditional.Size of them), owned by the node: nodes may be
	// added to them, but they are destroyed with it.
	GraphAddNode(g Graph, deps []GraphNode, p NodeParams) (GraphNode, []Graph, error)
	// GraphNodeSetParams changes node n's parameters in its graph; p.Type must be n's type.
	GraphNodeSetParams(n GraphNode, p NodeParams) error
	// GraphExecNodeSetParams changes node n's parameters in x for x's later launches; p.Type
	// must be n's type.
	GraphExecNodeSetParams(x GraphExec, n GraphNode, p NodeParams) error
	// StreamBeginCaptureToGraph starts capturing s into the existing graph g, after deps;
	// StreamEndCapture then returns g, which stays the caller's.
	StreamBeginCaptureToGraph(s Stream, g Graph, deps []GraphNode, mode CaptureMode) error
}
