package graphs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Description is a Go-side picture of a graph, for tests and logs: its nodes in an order where
// every node follows its dependencies, each with the indexes of the nodes it depends on.
type Description struct {
	Nodes []NodeDescription
}

// NodeDescription is one node of a Description.
type NodeDescription struct {
	Kind  Kind
	Label string // the kernel's name, the memset value…; "" when unknown (captured nodes)
	Deps  []int  // indexes into Description.Nodes
}

// Count is the number of nodes of kind k.
func (d Description) Count(k Kind) int {
	n := 0
	for _, nd := range d.Nodes {
		if nd.Kind == k {
			n++
		}
	}
	return n
}

// String lists the nodes one a line: "2 kernel reduce <- 0 1".
func (d Description) String() string {
	var b strings.Builder
	for i, n := range d.Nodes {
		fmt.Fprintf(&b, "%d %s", i, n.Kind)
		if n.Label != "" {
			b.WriteString(" " + n.Label)
		}
		if len(n.Deps) > 0 {
			b.WriteString(" <-")
			for _, dep := range n.Deps {
				fmt.Fprintf(&b, " %d", dep)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Describe describes the graph.
func (g *Graph) Describe(ctx context.Context) (Description, error) {
	return exec(ctx, g, func(rt backend.Device, _ *core.Tracker) (Description, error) {
		hs, err := rt.GraphNodes(g.h)
		if err != nil {
			return Description{}, err
		}
		from, to, err := rt.GraphEdges(g.h)
		if err != nil {
			return Description{}, err
		}
		deps := map[backend.GraphNode][]backend.GraphNode{}
		for i := range from {
			deps[to[i]] = append(deps[to[i]], from[i])
		}
		// Order: each node after its dependencies, otherwise as the runtime lists them.
		index := map[backend.GraphNode]int{}
		var order []backend.GraphNode
		var visit func(h backend.GraphNode)
		visit = func(h backend.GraphNode) {
			if _, ok := index[h]; ok {
				return
			}
			index[h] = -1
			for _, d := range deps[h] {
				visit(d)
			}
			index[h] = len(order)
			order = append(order, h)
		}
		for _, h := range hs {
			visit(h)
		}
		var d Description
		for _, h := range order {
			n, err := g.node(rt, h)
			if err != nil {
				return Description{}, err
			}
			nd := NodeDescription{Kind: n.kind, Label: n.label}
			for _, dep := range deps[h] {
				nd.Deps = append(nd.Deps, index[dep])
			}
			d.Nodes = append(d.Nodes, nd)
		}
		return d, nil
	})
}

// DOT is the graph in Graphviz DOT, as the runtime writes it (cudaGraphDebugDotPrint, verbose)
// or, on the simulator, as the simulator does.
func (g *Graph) DOT(ctx context.Context) (string, error) {
	dir, err := os.MkdirTemp("", "gpuactor-graph-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "graph.dot")
	if _, err := exec(ctx, g, func(rt backend.Device, _ *core.Tracker) (struct{}, error) {
		return struct{}{}, rt.GraphDebugDot(g.h, path)
	}); err != nil {
		return "", fmt.Errorf("gpuactor/graphs: DOT export: %w", err)
	}
	b, err := os.ReadFile(path)
	return string(b), err
}
