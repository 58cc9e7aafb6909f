package graphs_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/graphs"
)

// A captured kernel node's kernel, shape and shared memory are read from the runtime; its
// arguments are not known. A clone's kernel node is read the same way.
func TestKernelParamsOfACapturedNode(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		a := f.buffer(t, n)
		launch := cuda.LaunchConfig{Grid: cuda.Dim(2, 3), Block: cuda.Dim(32, 2), SharedMem: 256}
		g, err := graphs.Capture(f.Ctx, s, func(ctx context.Context) error {
			return s.Launch(ctx, f.mul, launch, a, uint32(2), int32(n)).Err()
		})
		require.NoError(t, err)
		nodes, err := g.Nodes(f.Ctx)
		require.NoError(t, err)
		require.Len(t, nodes, 1)
		kn := nodes[0]
		require.Equal(t, graphs.KernelNode, kn.Kind())
		p, err := kn.KernelParams(f.Ctx)
		require.NoError(t, err)
		assert.Same(t, f.mul, p.Kernel, "the runtime's function named the kernel launched")
		assert.Equal(t, launch.Grid, p.Config.Grid)
		assert.Equal(t, launch.Block, p.Config.Block)
		assert.Equal(t, launch.SharedMem, p.Config.SharedMem)
		assert.Nil(t, p.Args, "the runtime's argument bytes are not turned into Go values")

		// An added node, cloned: the clone's node was never given to gpuactor.
		h := f.graph(t)
		added := cuda.LaunchConfig{Grid: cuda.Dim(4), Block: cuda.Dim(64)}
		_, err = h.AddKernel(f.Ctx, nil, f.add, added, a, uint32(1), int32(n))
		require.NoError(t, err)
		c, err := h.Clone(f.Ctx)
		require.NoError(t, err)
		cn, err := c.Nodes(f.Ctx)
		require.NoError(t, err)
		require.Len(t, cn, 1)
		p, err = cn[0].KernelParams(f.Ctx)
		require.NoError(t, err)
		assert.Same(t, f.add, p.Kernel)
		assert.Equal(t, added.Grid, p.Config.Grid)
		assert.Equal(t, added.Block, p.Config.Block)
		assert.Zero(t, p.Config.SharedMem)

		// The wrong kind of node is refused naming it; the graph stays usable.
		ms, err := h.AddMemset(f.Ctx, nil, a, 0)
		require.NoError(t, err)
		_, err = ms.KernelParams(f.Ctx)
		require.ErrorIs(t, err, graphs.ErrWrongKind)
		_, err = cn[0].KernelParams(f.Ctx)
		require.NoError(t, err)
	})
}
