package sim

import (
	"slices"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Reading and editing a graph's shape after its nodes are added. A node knows its
// dependencies; its dependents and its graph are found by looking through the graphs, which
// these calls (not launches) can afford.

// nodeGraphLocked looks up a live node of a graph of d and the graph holding it; the caller holds
// gs.mu.
func (d *device) nodeGraphLocked(op string, h backend.GraphNode) (*snode, *sgraph, error) {
	n := d.graphs.nodes[h]
	if n != nil {
		for _, g := range d.graphs.graphs {
			if slices.Contains(g.nodes, n) {
				return n, g, nil
			}
		}
	}
	return nil, nil, d.fail(op, cudaerr.InvalidValue, "node %#x is not a live node of a graph of device %d", uintptr(h), d.ordinal)
}

func handlesOf(nodes []*snode) []backend.GraphNode {
	if len(nodes) == 0 {
		return nil
	}
	out := make([]backend.GraphNode, len(nodes))
	for i, n := range nodes {
		out[i] = n.h
	}
	return out
}

// GraphNodeDependencies lists the nodes n runs after, in the order the edges were added.
func (d *device) GraphNodeDependencies(h backend.GraphNode) ([]backend.GraphNode, error) {
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	n, _, err := d.nodeGraphLocked("cudaGraphNodeGetDependencies", h)
	if err != nil {
		return nil, err
	}
	return handlesOf(n.deps), nil
}

// GraphNodeDependents lists the nodes that run after n, in the graph's order.
func (d *device) GraphNodeDependents(h backend.GraphNode) ([]backend.GraphNode, error) {
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	n, g, err := d.nodeGraphLocked("cudaGraphNodeGetDependentNodes", h)
	if err != nil {
		return nil, err
	}
	var out []*snode
	for _, m := range g.nodes {
		if slices.Contains(m.deps, n) {
			out = append(out, m)
		}
	}
	return handlesOf(out), nil
}

// GraphRemoveDependencies removes edges of g; all must exist, else none is removed.
func (d *device) GraphRemoveDependencies(h backend.Graph, from, to []backend.GraphNode) error {
	const op = "cudaGraphRemoveDependencies"
	if len(from) != len(to) {
		return d.fail(op, cudaerr.InvalidValue, "%d sources for %d destinations", len(from), len(to))
	}
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	g, err := d.graphLocked(op, h)
	if err != nil {
		return err
	}
	type edge struct{ f, t *snode }
	edges := make([]edge, len(from))
	for i := range from {
		f, t := gs.nodes[from[i]], gs.nodes[to[i]]
		for _, x := range []struct {
			n *snode
			h backend.GraphNode
		}{{f, from[i]}, {t, to[i]}} {
			if x.n == nil || !slices.Contains(g.nodes, x.n) {
				return d.fail(op, cudaerr.InvalidValue, "node %#x is not a node of graph %#x", uintptr(x.h), uintptr(h))
			}
		}
		if !slices.Contains(t.deps, f) || slices.Contains(edges[:i], edge{f, t}) {
			return d.fail(op, cudaerr.InvalidValue, "graph %#x has no edge %#x -> %#x", uintptr(h), uintptr(from[i]), uintptr(to[i]))
		}
		edges[i] = edge{f, t}
	}
	for _, e := range edges {
		e.t.deps = slices.DeleteFunc(e.t.deps, func(n *snode) bool { return n == e.f })
	}
	return nil
}

// GraphDestroyNode removes a node and its edges from its graph.
func (d *device) GraphDestroyNode(h backend.GraphNode) error {
	const op = "cudaGraphDestroyNode"
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	n, g, err := d.nodeGraphLocked(op, h)
	if err != nil {
		return err
	}
	for _, c := range gs.captures {
		if c.graph == g {
			return d.fail(op, cudaerr.IllegalState, "graph %#x is being captured into", uintptr(g.h))
		}
	}
	g.nodes = slices.DeleteFunc(g.nodes, func(m *snode) bool { return m == n })
	for _, m := range g.nodes {
		m.deps = slices.DeleteFunc(m.deps, func(dep *snode) bool { return dep == n })
	}
	d.dropNodesLocked(&sgraph{nodes: []*snode{n}})
	return nil
}

// GraphNodeFindInClone finds the node of clone copied from orig.
func (d *device) GraphNodeFindInClone(ch backend.Graph, orig backend.GraphNode) (backend.GraphNode, error) {
	const op = "cudaGraphNodeFindInClone"
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	c, err := d.graphLocked(op, ch)
	if err != nil {
		return 0, err
	}
	for _, n := range c.nodes {
		if n.from == orig && n.h != orig {
			return n.h, nil
		}
	}
	return 0, d.fail(op, cudaerr.InvalidValue, "graph %#x has no node cloned from node %#x", uintptr(ch), uintptr(orig))
}

// GraphNodeEnabled reports whether a node is enabled in an executable graph.
func (d *device) GraphNodeEnabled(h backend.GraphExec, nh backend.GraphNode) (bool, error) {
	const op = "cudaGraphNodeGetEnabled"
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	x, err := d.execLocked(op, h)
	if err != nil {
		return false, err
	}
	n := x.byOrig[nh]
	if n == nil {
		return false, d.fail(op, cudaerr.InvalidValue, "node %#x is not a node of the graph executable %#x was made from", uintptr(nh), uintptr(h))
	}
	switch n.typ {
	case backend.NodeKernel, backend.NodeMemcpy, backend.NodeMemset:
	default:
		return false, d.fail(op, cudaerr.InvalidValue, "only kernel, copy and memset nodes can be disabled, not %s nodes", n.typ)
	}
	return !x.disabled[n], nil
}
