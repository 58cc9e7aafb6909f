package graphs

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

var (
	// ErrCycle: a dependency that would make the graph's nodes wait on each other.
	ErrCycle = errors.New("gpuactor/graphs: dependency would make a cycle")
	// ErrNoDependency: RemoveDependency of an edge the graph does not have.
	ErrNoDependency = errors.New("gpuactor/graphs: no such dependency")
	// ErrNodeDestroyed: a node used after Destroy.
	ErrNodeDestroyed = errors.New("gpuactor/graphs: node was destroyed")
)

// usable checks that n is a live node of g.
func (n *Node) usable(g *Graph) error {
	if n == nil {
		return invalid("nil node")
	}
	if n.destroyed.Load() {
		return fmt.Errorf("%w: %s", ErrNodeDestroyed, n)
	}
	if n.g != g {
		return fmt.Errorf("%w: %s", ErrForeignNode, n)
	}
	return nil
}

// neighbours runs list (GraphNodeDependencies or GraphNodeDependents) for n on the actor.
func (n *Node) neighbours(ctx context.Context, what string, list func(rt backend.Device) ([]backend.GraphNode, error)) ([]*Node, error) {
	if n == nil {
		return nil, invalid("nil node")
	}
	return exec(ctx, n.g, func(rt backend.Device, _ *core.Tracker) ([]*Node, error) {
		if n.destroyed.Load() {
			return nil, fmt.Errorf("%w: %s", ErrNodeDestroyed, n)
		}
		hs, err := list(rt)
		if err != nil {
			return nil, fmt.Errorf("gpuactor/graphs: listing the %s of %s: %w", what, n, err)
		}
		return n.g.nodeList(rt, hs)
	})
}

// Dependencies lists the nodes n runs after.
func (n *Node) Dependencies(ctx context.Context) ([]*Node, error) {
	return n.neighbours(ctx, "dependencies", func(rt backend.Device) ([]backend.GraphNode, error) {
		return rt.GraphNodeDependencies(n.h)
	})
}

// Dependents lists the nodes that run after n.
func (n *Node) Dependents(ctx context.Context) ([]*Node, error) {
	return n.neighbours(ctx, "dependents", func(rt backend.Device) ([]backend.GraphNode, error) {
		return rt.GraphNodeDependents(n.h)
	})
}

// checkAcyclic refuses the edge from → to when to already runs before from (or is from):
// CUDA does not check every such edge when it is added. On the actor thread.
func (g *Graph) checkAcyclic(rt backend.Device, from, to *Node) error {
	if from == to {
		return fmt.Errorf("%w: %s cannot depend on itself", ErrCycle, from)
	}
	seen := map[backend.GraphNode]bool{}
	stack := []backend.GraphNode{from.h}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if h == to.h {
			return fmt.Errorf("%w: %s → %s, but %s already runs before %s", ErrCycle, from, to, to, from)
		}
		if seen[h] {
			continue
		}
		seen[h] = true
		deps, err := rt.GraphNodeDependencies(h)
		if err != nil {
			return err
		}
		stack = append(stack, deps...)
	}
	return nil
}

// RemoveDependency removes the dependency "to runs after from", which must exist; both must
// be nodes of g. A missing one is an ErrNoDependency error naming the nodes, and changes
// nothing.
func (g *Graph) RemoveDependency(ctx context.Context, from, to *Node) error {
	for _, n := range []*Node{from, to} {
		if err := n.usable(g); err != nil {
			return err
		}
	}
	_, err := exec(ctx, g, func(rt backend.Device, _ *core.Tracker) (struct{}, error) {
		deps, err := rt.GraphNodeDependencies(to.h)
		if err != nil {
			return struct{}{}, err
		}
		if !slices.Contains(deps, from.h) {
			return struct{}{}, fmt.Errorf("%w: %s does not run after %s", ErrNoDependency, to, from)
		}
		if err := rt.GraphRemoveDependencies(g.h, []backend.GraphNode{from.h}, []backend.GraphNode{to.h}); err != nil {
			return struct{}{}, fmt.Errorf("gpuactor/graphs: removing the dependency %s → %s: %w", from, to, err)
		}
		return struct{}{}, nil
	})
	return err
}

// Destroy removes n and its dependencies from its graph. Executable graphs already made keep
// their copy of it. n is unusable afterwards: using it (or destroying it again) is an
// ErrNodeDestroyed error.
func (n *Node) Destroy(ctx context.Context) error {
	if n == nil {
		return invalid("Destroy of a nil node")
	}
	_, err := exec(ctx, n.g, func(rt backend.Device, _ *core.Tracker) (struct{}, error) {
		if n.destroyed.Load() {
			return struct{}{}, fmt.Errorf("%w: %s destroyed twice", ErrNodeDestroyed, n)
		}
		if err := rt.GraphDestroyNode(n.h); err != nil {
			return struct{}{}, fmt.Errorf("gpuactor/graphs: destroying %s: %w", n, err)
		}
		n.destroyed.Store(true)
		n.g.mu.Lock()
		if n.g.nodes[n.h] == n {
			delete(n.g.nodes, n.h) // the runtime may give the handle to a later node
		}
		n.g.mu.Unlock()
		return struct{}{}, nil
	})
	return err
}

// NodeInClone returns the node of g, a graph made by Clone, copied from original, a node of
// the graph g was cloned from.
func (g *Graph) NodeInClone(ctx context.Context, original *Node) (*Node, error) {
	if g == nil || original == nil {
		return nil, invalid("NodeInClone with a nil graph or node")
	}
	if g.source == nil {
		return nil, invalid("NodeInClone: the graph was not made by Clone")
	}
	if err := original.usable(g.source); err != nil {
		return nil, err
	}
	return exec(ctx, g, func(rt backend.Device, _ *core.Tracker) (*Node, error) {
		h, err := rt.GraphNodeFindInClone(g.h, original.h)
		if err != nil {
			return nil, fmt.Errorf("gpuactor/graphs: finding the copy of %s: %w", original, err)
		}
		n, err := g.node(rt, h)
		if err != nil {
			return nil, err
		}
		g.mu.Lock()
		if n.label == "" {
			n.label = original.label
		}
		if n.spec == nil {
			n.spec = original.spec
		}
		g.mu.Unlock()
		return n, nil
	})
}

// Enabled reports whether node n (a kernel, copy or memset node) is enabled in the Exec's
// later launches (SetEnabled changes it).
func (x *Exec) Enabled(ctx context.Context, n *Node) (bool, error) {
	if err := x.member(n); err != nil {
		return false, err
	}
	var on bool
	err := x.run(ctx, func(rt backend.Device, _ *core.Tracker) error {
		var err error
		on, err = rt.GraphNodeEnabled(x.h, n.h)
		if err != nil {
			return fmt.Errorf("gpuactor/graphs: reading whether %s is enabled: %w", n, err)
		}
		return nil
	})
	return on, err
}
