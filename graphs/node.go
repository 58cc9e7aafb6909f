package graphs

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// Kind is a node's type.
type Kind int32

// Node kinds.
const (
	KernelNode      = Kind(backend.NodeKernel)
	CopyNode        = Kind(backend.NodeMemcpy)
	MemsetNode      = Kind(backend.NodeMemset)
	HostNode        = Kind(backend.NodeHost)
	ChildNode       = Kind(backend.NodeGraph)
	EmptyNode       = Kind(backend.NodeEmpty)
	EventWaitNode   = Kind(backend.NodeWaitEvent)
	EventRecordNode = Kind(backend.NodeEventRecord)
	AllocNode       = Kind(backend.NodeMemAlloc)
	FreeNode        = Kind(backend.NodeMemFree)

	SemaphoreSignalNode = Kind(backend.NodeExtSemasSignal) // signals external semaphores (semaphore.go)
	SemaphoreWaitNode   = Kind(backend.NodeExtSemasWait)   // waits for external semaphores
)

// String names the kind.
func (k Kind) String() string { return backend.NodeType(k).String() }

// Node is one node of a Graph.
type Node struct {
	g     *Graph
	h     backend.GraphNode
	kind  Kind
	label string
	spec  *core.LaunchSpec // kernel nodes added through gpuactor: what SetKernelArgs starts from

	destroyed atomic.Bool // Destroy removed it from its graph (topology.go)
	// bodies are a conditional node's body graphs (conditional.go); guarded by g.mu.
	bodies []*Graph
	// Known parameters of nodes added or set through gpuactor (params.go), guarded by g.mu.
	args  []any          // kernel nodes: the arguments as given
	event *streams.Event // event record and wait nodes
	child *Graph         // child nodes: the embedded graph, once asked for
	box   *Copy3D        // 3D copy nodes: the copy last given (copy3d.go)
}

// Kind is the node's type.
func (n *Node) Kind() Kind {
	if n == nil {
		return 0
	}
	return n.kind
}

// Graph is the graph the node belongs to.
func (n *Node) Graph() *Graph {
	if n == nil {
		return nil
	}
	return n.g
}

// String describes the node, e.g. "kernel reduce".
func (n *Node) String() string {
	if n == nil {
		return "<nil node>"
	}
	if n.label == "" {
		return n.kind.String()
	}
	return n.kind.String() + " " + n.label
}

// Deps is the set of nodes a new node depends on.
type Deps []*Node

// After lists the nodes a new node runs after; After() (or nil) makes a root node.
func After(nodes ...*Node) Deps { return nodes }

// handles checks that every dependency is a node of g.
func (d Deps) handles(g *Graph) ([]backend.GraphNode, error) {
	if len(d) == 0 {
		return nil, nil
	}
	out := make([]backend.GraphNode, len(d))
	for i, n := range d {
		if n == nil {
			return nil, invalid("dependency %d is a nil node", i)
		}
		if err := n.usable(g); err != nil {
			return nil, fmt.Errorf("dependency %d: %w", i, err)
		}
		out[i] = n.h
	}
	return out, nil
}

// node returns the Node of handle h, making one for nodes gpuactor did not add itself
// (captured, cloned); on the actor thread.
func (g *Graph) node(rt backend.Device, h backend.GraphNode) (*Node, error) {
	g.mu.Lock()
	n := g.nodes[h]
	g.mu.Unlock()
	if n != nil {
		return n, nil
	}
	t, err := rt.GraphNodeType(h)
	if err != nil {
		return nil, err
	}
	return g.remember(h, Kind(t), "", nil), nil
}

func (g *Graph) remember(h backend.GraphNode, kind Kind, label string, spec *core.LaunchSpec) *Node {
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := g.nodes[h]; n != nil {
		if label != "" {
			n.label = label
		}
		if spec != nil {
			n.spec = spec
		}
		return n
	}
	n := &Node{g: g, h: h, kind: kind, label: label, spec: spec}
	g.nodes[h] = n
	return n
}

func (g *Graph) nodeList(rt backend.Device, hs []backend.GraphNode) ([]*Node, error) {
	out := make([]*Node, len(hs))
	for i, h := range hs {
		n, err := g.node(rt, h)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// Nodes lists the graph's nodes.
func (g *Graph) Nodes(ctx context.Context) ([]*Node, error) {
	return exec(ctx, g, func(rt backend.Device, _ *core.Tracker) ([]*Node, error) {
		hs, err := rt.GraphNodes(g.h)
		if err != nil {
			return nil, err
		}
		return g.nodeList(rt, hs)
	})
}

// Roots lists the nodes that depend on nothing.
func (g *Graph) Roots(ctx context.Context) ([]*Node, error) {
	return exec(ctx, g, func(rt backend.Device, _ *core.Tracker) ([]*Node, error) {
		hs, err := rt.GraphRootNodes(g.h)
		if err != nil {
			return nil, err
		}
		return g.nodeList(rt, hs)
	})
}

// Edge is a dependency: To runs after From.
type Edge struct{ From, To *Node }

// Edges lists the graph's dependencies.
func (g *Graph) Edges(ctx context.Context) ([]Edge, error) {
	return exec(ctx, g, func(rt backend.Device, _ *core.Tracker) ([]Edge, error) {
		from, to, err := rt.GraphEdges(g.h)
		if err != nil {
			return nil, err
		}
		out := make([]Edge, len(from))
		for i := range from {
			f, err := g.node(rt, from[i])
			if err != nil {
				return nil, err
			}
			t, err := g.node(rt, to[i])
			if err != nil {
				return nil, err
			}
			out[i] = Edge{f, t}
		}
		return out, nil
	})
}

// Depend adds the dependency "to runs after from"; both must be nodes of g.
func (g *Graph) Depend(ctx context.Context, from, to *Node) error {
	if from == nil || to == nil {
		return invalid("Depend on a nil node")
	}
	for _, n := range []*Node{from, to} {
		if err := n.usable(g); err != nil {
			return err
		}
	}
	_, err := exec(ctx, g, func(rt backend.Device, _ *core.Tracker) (struct{}, error) {
		if err := g.checkAcyclic(rt, from, to); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, rt.GraphAddDependencies(g.h, []backend.GraphNode{from.h}, []backend.GraphNode{to.h})
	})
	return err
}
