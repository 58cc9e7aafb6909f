package graphs_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/gpuactor/gpuactor/graphs"
)

// Read and edit a graph's shape: the dependencies of a node, an edge that would close a
// cycle, removing an edge and a node.
func ExampleGraph_RemoveDependency() {
	ctx := context.Background()
	dev, _, _ := exampleSetup(ctx)
	defer dev.Close()

	g, _ := graphs.New(ctx, dev)
	a, _ := g.AddEmpty(ctx, nil)
	b, _ := g.AddEmpty(ctx, graphs.After(a))
	c, _ := g.AddEmpty(ctx, graphs.After(a, b))

	deps, _ := c.Dependencies(ctx)
	fmt.Println("c runs after", len(deps), "nodes")
	err := g.Depend(ctx, c, a)
	fmt.Println("c → a makes a cycle:", errors.Is(err, graphs.ErrCycle))

	_ = g.RemoveDependency(ctx, a, c)
	err = g.RemoveDependency(ctx, a, c)
	fmt.Println("removed twice:", errors.Is(err, graphs.ErrNoDependency))

	_ = b.Destroy(ctx)
	roots, _ := g.Roots(ctx)
	fmt.Println("roots after destroying b:", len(roots))
	// Output:
	// c runs after 2 nodes
	// c → a makes a cycle: true
	// removed twice: true
	// roots after destroying b: 2
}
