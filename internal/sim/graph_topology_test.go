package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

func empties(t *testing.T, d backend.Device, g backend.Graph, deps ...[]backend.GraphNode) []backend.GraphNode {
	t.Helper()
	out := make([]backend.GraphNode, len(deps))
	for i, ds := range deps {
		n, err := d.GraphAddEmptyNode(g, ds)
		require.NoError(t, err)
		out[i] = n
	}
	return out
}

// RemoveDependencies removes all the edges it is given or none.
func TestGraphRemoveDependenciesAllOrNothing(t *testing.T) {
	_, d, _ := open(t)
	g, err := d.GraphCreate()
	require.NoError(t, err)
	a, err := d.GraphAddEmptyNode(g, nil)
	require.NoError(t, err)
	b, err := d.GraphAddEmptyNode(g, []backend.GraphNode{a})
	require.NoError(t, err)
	c, err := d.GraphAddEmptyNode(g, []backend.GraphNode{a, b})
	require.NoError(t, err)

	err = d.GraphRemoveDependencies(g, []backend.GraphNode{a, b}, []backend.GraphNode{c, a})
	require.ErrorIs(t, err, cudaerr.InvalidValue, "b -> a does not exist")
	deps, err := d.GraphNodeDependencies(c)
	require.NoError(t, err)
	assert.Equal(t, []backend.GraphNode{a, b}, deps, "a -> c was kept")
	require.ErrorIs(t, d.GraphRemoveDependencies(g, []backend.GraphNode{a, a}, []backend.GraphNode{c, c}), cudaerr.InvalidValue, "an edge listed twice")
	require.ErrorIs(t, d.GraphRemoveDependencies(g, []backend.GraphNode{a}, nil), cudaerr.InvalidValue)

	require.NoError(t, d.GraphRemoveDependencies(g, []backend.GraphNode{a, b}, []backend.GraphNode{c, c}))
	roots, err := d.GraphRootNodes(g)
	require.NoError(t, err)
	assert.Equal(t, []backend.GraphNode{a, c}, roots)
}

// FindInClone finds a clone's copy of a node of its source, and only of its source.
func TestGraphNodeFindInClone(t *testing.T) {
	_, d, _ := open(t)
	g, err := d.GraphCreate()
	require.NoError(t, err)
	ns := empties(t, d, g, nil, nil)
	c, err := d.GraphClone(g)
	require.NoError(t, err)
	cc, err := d.GraphClone(c)
	require.NoError(t, err)
	n1, err := d.GraphNodeFindInClone(c, ns[1])
	require.NoError(t, err)
	assert.NotEqual(t, ns[1], n1)
	typ, err := d.GraphNodeType(n1)
	require.NoError(t, err)
	assert.Equal(t, backend.NodeEmpty, typ)
	_, err = d.GraphNodeFindInClone(cc, ns[1])
	require.ErrorIs(t, err, cudaerr.InvalidValue, "cc was cloned from c, not g")
	n2, err := d.GraphNodeFindInClone(cc, n1)
	require.NoError(t, err)
	assert.NotEqual(t, n1, n2)
	_, err = d.GraphNodeFindInClone(g, ns[0])
	require.ErrorIs(t, err, cudaerr.InvalidValue, "g is no clone of itself")

	require.NoError(t, d.GraphDestroyNode(n1))
	_, err = d.GraphNodeFindInClone(c, ns[1])
	require.ErrorIs(t, err, cudaerr.InvalidValue, "the copy was destroyed")
	require.ErrorIs(t, d.GraphDestroyNode(n1), cudaerr.InvalidValue, "destroyed twice")
	_, err = d.GraphNodeDependents(n1)
	require.ErrorIs(t, err, cudaerr.InvalidValue)
}

// Graph memory: reserved from the allocation node on, used from a launch's allocation to a
// launch's free, with high watermarks that a reset brings down to the current figures.
func TestGraphMemAttributes(t *testing.T) {
	_, d, _ := open(t)
	s := mkStream(t, d)
	attr := func(a backend.GraphMemAttr) uint64 {
		t.Helper()
		v, err := d.GraphMemAttribute(a)
		require.NoError(t, err)
		return v
	}
	g, err := d.GraphCreate()
	require.NoError(t, err)
	alloc, p, err := d.GraphAddMemAllocNode(g, nil, 4096)
	require.NoError(t, err)
	assert.Equal(t, uint64(4096), attr(backend.GraphMemReservedCurrent))
	assert.Zero(t, attr(backend.GraphMemUsedCurrent))
	x, err := d.GraphInstantiate(g, 0)
	require.NoError(t, err)
	require.NoError(t, d.GraphLaunch(x, s))
	require.NoError(t, d.StreamSynchronize(s))
	assert.Equal(t, uint64(4096), attr(backend.GraphMemUsedCurrent), "allocated, never freed")

	fg, err := d.GraphCreate()
	require.NoError(t, err)
	_, err = d.GraphAddMemFreeNode(fg, nil, p)
	require.NoError(t, err)
	fx, err := d.GraphInstantiate(fg, 0)
	require.NoError(t, err)
	require.NoError(t, d.GraphLaunch(fx, s))
	require.NoError(t, d.StreamSynchronize(s))
	assert.Equal(t, uint64(4096), attr(backend.GraphMemUsedCurrent), "freed, still mapped for the allocating graph (as on a GPU)")
	assert.Equal(t, uint64(4096), attr(backend.GraphMemUsedHigh))

	require.NoError(t, d.GraphExecDestroy(x))
	require.NoError(t, d.GraphExecDestroy(fx))
	require.NoError(t, d.GraphDestroy(fg))
	require.NoError(t, d.GraphDestroyNode(alloc))
	require.NoError(t, d.GraphMemTrim())
	assert.Zero(t, attr(backend.GraphMemReservedCurrent))
	assert.Zero(t, attr(backend.GraphMemUsedCurrent), "the last holder let it go")
	assert.Equal(t, uint64(4096), attr(backend.GraphMemReservedHigh))
	require.NoError(t, d.SetGraphMemAttribute(backend.GraphMemReservedHigh, 0))
	require.NoError(t, d.SetGraphMemAttribute(backend.GraphMemUsedHigh, 0))
	assert.Zero(t, attr(backend.GraphMemReservedHigh))
	assert.Zero(t, attr(backend.GraphMemUsedHigh))
	require.ErrorIs(t, d.SetGraphMemAttribute(backend.GraphMemUsedHigh, 1), cudaerr.InvalidValue)
	require.ErrorIs(t, d.SetGraphMemAttribute(backend.GraphMemReservedCurrent, 0), cudaerr.InvalidValue)
	require.NoError(t, d.GraphDestroy(g))
}

// InstantiateWithParams names the node a device-launchable graph cannot hold, and uploads
// when asked.
func TestGraphInstantiateWithParams(t *testing.T) {
	_, d, _ := open(t)
	s := mkStream(t, d)
	g, err := d.GraphCreate()
	require.NoError(t, err)
	empty, err := d.GraphAddEmptyNode(g, nil)
	require.NoError(t, err)
	host, err := d.GraphAddHostNode(g, []backend.GraphNode{empty}, func() {})
	require.NoError(t, err)
	_, info, err := d.GraphInstantiateWithParams(g, backend.InstantiateDeviceLaunch, 0)
	require.ErrorIs(t, err, cudaerr.InvalidValue)
	assert.Equal(t, backend.InstantiateInfo{Result: backend.InstantiateNodeOperationNotSupported, ErrorNode: host}, info)
	_, _, err = d.GraphInstantiateWithParams(g, backend.InstantiateUpload, 0x4242)
	require.Error(t, err, "no such upload stream")

	x, info, err := d.GraphInstantiateWithParams(g, backend.InstantiateUpload|backend.InstantiateUseNodePriority, s)
	require.NoError(t, err)
	assert.Equal(t, backend.InstantiateSuccess, info.Result)
	flags, err := d.GraphExecFlags(x)
	require.NoError(t, err)
	assert.Equal(t, backend.InstantiateUpload, flags, "UseNodePriority is honoured but not reported, as by the runtime")
	require.NoError(t, d.GraphExecDestroy(x))
	_, err = d.GraphExecFlags(x)
	require.ErrorIs(t, err, cudaerr.InvalidValue)
	require.NoError(t, d.GraphDestroy(g))
}
