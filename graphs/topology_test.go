package graphs_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/testdev"
)

// diamond builds zero → {side, five} → triple: out = (out*0 + 5) * 3, and side adds 1 to
// other, with nothing after it but triple.
type diamond struct {
	g                        *graphs.Graph
	zero, side, five, triple *graphs.Node
	out, other               *device.Buffer
}

func (f *fixture) diamond(t *testing.T) diamond {
	t.Helper()
	d := diamond{g: f.graph(t), out: f.buffer(t, n), other: f.buffer(t, n)}
	var err error
	d.zero, err = d.g.AddKernel(f.Ctx, nil, f.mul, cfg(n), d.out, uint32(0), int32(n))
	require.NoError(t, err)
	d.side, err = d.g.AddKernel(f.Ctx, graphs.After(d.zero), f.add, cfg(n), d.other, uint32(1), int32(n))
	require.NoError(t, err)
	d.five, err = d.g.AddKernel(f.Ctx, graphs.After(d.zero), f.add, cfg(n), d.out, uint32(5), int32(n))
	require.NoError(t, err)
	d.triple, err = d.g.AddKernel(f.Ctx, graphs.After(d.side, d.five), f.mul, cfg(n), d.out, uint32(3), int32(n))
	require.NoError(t, err)
	return d
}

func TestDependenciesAndDependents(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		d := f.diamond(t)
		deps, err := d.triple.Dependencies(f.Ctx)
		require.NoError(t, err)
		assert.ElementsMatch(t, []*graphs.Node{d.side, d.five}, deps, "the same *Node values the builder returned")
		after, err := d.zero.Dependents(f.Ctx)
		require.NoError(t, err)
		assert.ElementsMatch(t, []*graphs.Node{d.side, d.five}, after)
		none, err := d.zero.Dependencies(f.Ctx)
		require.NoError(t, err)
		assert.Empty(t, none)
		last, err := d.triple.Dependents(f.Ctx)
		require.NoError(t, err)
		assert.Empty(t, last)
	})
}

func TestRemoveDependencyAndDestroy(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		d := f.diamond(t)
		require.NoError(t, d.g.RemoveDependency(f.Ctx, d.side, d.triple))
		deps, err := d.triple.Dependencies(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, []*graphs.Node{d.five}, deps)

		err = d.g.RemoveDependency(f.Ctx, d.side, d.triple)
		require.ErrorIs(t, err, graphs.ErrNoDependency, "removed already")
		assert.Contains(t, err.Error(), d.side.String())
		require.ErrorIs(t, d.g.RemoveDependency(f.Ctx, d.zero, d.triple), graphs.ErrNoDependency, "only a path, no edge")

		require.NoError(t, d.side.Destroy(f.Ctx))
		err = d.side.Destroy(f.Ctx)
		require.ErrorIs(t, err, graphs.ErrNodeDestroyed)
		assert.Contains(t, err.Error(), "destroyed twice")
		require.ErrorIs(t, d.g.Depend(f.Ctx, d.side, d.triple), graphs.ErrNodeDestroyed)
		_, err = d.g.AddEmpty(f.Ctx, graphs.After(d.side))
		require.ErrorIs(t, err, graphs.ErrNodeDestroyed)
		_, err = d.side.Dependencies(f.Ctx)
		require.ErrorIs(t, err, graphs.ErrNodeDestroyed)

		nodes, err := d.g.Nodes(f.Ctx)
		require.NoError(t, err)
		assert.ElementsMatch(t, []*graphs.Node{d.zero, d.five, d.triple}, nodes)
		after, err := d.zero.Dependents(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, []*graphs.Node{d.five}, after, "the destroyed node's edges went with it")

		// The graph still runs, without the destroyed node.
		testdev.Write(t, f.Ctx, d.other, make([]uint32, n))
		x, err := d.g.Instantiate(f.Ctx)
		require.NoError(t, err)
		f.launch(t, x, f.Stream(t))
		assert.Equal(t, testdev.Filled(n, 15), f.read(t, d.out))
		assert.Equal(t, make([]uint32, n), f.read(t, d.other), "the destroyed node did not run")
		require.NoError(t, x.Close(f.Ctx))
	})
}

func TestDependCycleAndForeignNodes(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		d := f.diamond(t)
		err := d.g.Depend(f.Ctx, d.triple, d.zero)
		require.ErrorIs(t, err, graphs.ErrCycle)
		assert.Contains(t, err.Error(), d.triple.String())
		assert.Contains(t, err.Error(), d.zero.String())
		require.ErrorIs(t, d.g.Depend(f.Ctx, d.five, d.five), graphs.ErrCycle)
		require.ErrorIs(t, d.g.Depend(f.Ctx, d.triple, d.side), graphs.ErrCycle)

		other := f.graph(t)
		stranger, err := other.AddEmpty(f.Ctx, nil)
		require.NoError(t, err)
		require.ErrorIs(t, d.g.Depend(f.Ctx, stranger, d.zero), graphs.ErrForeignNode)
		require.ErrorIs(t, d.g.RemoveDependency(f.Ctx, d.zero, stranger), graphs.ErrForeignNode)

		// Nothing changed: a legal edge still goes in and the graph runs.
		require.NoError(t, d.g.Depend(f.Ctx, d.side, d.five))
		edges, err := d.g.Edges(f.Ctx)
		require.NoError(t, err)
		assert.Len(t, edges, 5)
		x, err := d.g.Instantiate(f.Ctx)
		require.NoError(t, err)
		f.launch(t, x, f.Stream(t))
		assert.Equal(t, testdev.Filled(n, 15), f.read(t, d.out))
		require.NoError(t, x.Close(f.Ctx))
	})
}

func TestNodeInClone(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		d := f.diamond(t)
		clone, err := d.g.Clone(f.Ctx)
		require.NoError(t, err)
		ct, err := clone.NodeInClone(f.Ctx, d.triple)
		require.NoError(t, err)
		assert.Same(t, clone, ct.Graph())
		assert.Equal(t, graphs.KernelNode, ct.Kind())
		assert.Equal(t, d.triple.String(), ct.String(), "the copy keeps the original's label")
		cf, err := clone.NodeInClone(f.Ctx, d.five)
		require.NoError(t, err)
		deps, err := ct.Dependencies(f.Ctx)
		require.NoError(t, err)
		assert.Contains(t, deps, cf)

		_, err = d.g.NodeInClone(f.Ctx, d.triple)
		require.Error(t, err, "g is no clone")
		_, err = clone.NodeInClone(f.Ctx, ct)
		require.ErrorIs(t, err, graphs.ErrForeignNode, "a node of the clone, not of its source")

		// The copy takes new arguments in an Exec of the clone.
		x, err := clone.Instantiate(f.Ctx)
		require.NoError(t, err)
		require.NoError(t, x.SetKernelArgs(f.Ctx, ct, d.out, uint32(2), int32(n)))
		f.launch(t, x, f.Stream(t))
		assert.Equal(t, testdev.Filled(n, 10), f.read(t, d.out))
		require.NoError(t, x.Close(f.Ctx))
	})
}

func TestExecEnabled(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		d := f.diamond(t)
		empty, err := d.g.AddEmpty(f.Ctx, nil)
		require.NoError(t, err)
		x, err := d.g.Instantiate(f.Ctx)
		require.NoError(t, err)
		on, err := x.Enabled(f.Ctx, d.triple)
		require.NoError(t, err)
		assert.True(t, on)
		require.NoError(t, x.SetEnabled(f.Ctx, d.triple, false))
		on, err = x.Enabled(f.Ctx, d.triple)
		require.NoError(t, err)
		assert.False(t, on)
		f.launch(t, x, f.Stream(t))
		assert.Equal(t, testdev.Filled(n, 5), f.read(t, d.out), "the disabled node did nothing")

		_, err = x.Enabled(f.Ctx, empty)
		require.Error(t, err, "only kernel, copy and memset nodes")
		other := f.graph(t)
		stranger, err := other.AddEmpty(f.Ctx, nil)
		require.NoError(t, err)
		_, err = x.Enabled(f.Ctx, stranger)
		require.ErrorIs(t, err, graphs.ErrForeignNode)
		require.NoError(t, x.SetEnabled(f.Ctx, d.triple, true))
		on, err = x.Enabled(f.Ctx, d.triple)
		require.NoError(t, err)
		assert.True(t, on)
		require.NoError(t, x.Close(f.Ctx))
	})
}

// An Exec refuses an update from its graph after a node was destroyed there (the topology
// changed), saying so, and keeps running as it was.
func TestUpdateAfterTopologyChange(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		d := f.diamond(t)
		testdev.Write(t, f.Ctx, d.other, make([]uint32, n))
		x, err := d.g.Instantiate(f.Ctx)
		require.NoError(t, err)
		require.NoError(t, d.side.Destroy(f.Ctx))
		err = x.Update(f.Ctx, d.g)
		var ue *graphs.UpdateError
		require.ErrorAs(t, err, &ue)
		assert.Contains(t, ue.Reason, "topology")
		f.launch(t, x, f.Stream(t))
		assert.Equal(t, testdev.Filled(n, 15), f.read(t, d.out))
		assert.Equal(t, testdev.Filled(n, 1), f.read(t, d.other), "the Exec still has the node")
		require.NoError(t, x.Close(f.Ctx))
	})
}
