package graphs_test

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/graphs"
)

// One stream captures two independent memsets as parallel branches and a launch that joins
// them: the second memset is set to depend on the capture's start, and the launch adds the
// point after the first.
func ExampleCapturing_SetDependencies() {
	ctx := context.Background()
	dev, _, s := exampleSetup(ctx)
	defer dev.Close()
	a, _ := dev.MallocBytes(ctx, 64)
	b, _ := dev.MallocBytes(ctx, 64)

	c, err := graphs.BeginCapture(ctx, s)
	if err != nil {
		panic(err)
	}
	start, _ := c.Dependencies(ctx)
	s.Memset(ctx, a, 1)
	afterA, _ := c.Dependencies(ctx)
	_ = c.SetDependencies(ctx, start) // a branch beside the first memset
	s.Memset(ctx, b, 2)
	_ = c.AddDependencies(ctx, afterA) // join
	s.Copy(ctx, a, b)
	g, err := c.End(ctx)
	if err != nil {
		panic(err)
	}
	d, _ := g.Describe(ctx)
	fmt.Print(d)
	// Output:
	// 0 memset
	// 1 memset
	// 2 memcpy <- 1 0
}
