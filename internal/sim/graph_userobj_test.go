package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// live reports whether user object o of d is still alive (not yet given to its destructor).
func live(d backend.Device, o backend.UserObject) bool {
	gs := &d.(*device).graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	return gs.users[o] != nil
}

func awaitClosed(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal(what)
	}
}

// A user object held by a graph lives while the graph, its copies (a child node of another
// graph, an executable graph) and the launches of those run; its destructor runs once, after.
func TestUserObjectLivesAsLongAsItsHolders(t *testing.T) {
	_, d, _ := open(t)
	s := mkStream(t, d)
	destroyed := make(chan struct{})
	o, err := d.UserObjectCreate(func() { close(destroyed) })
	require.NoError(t, err)

	child, err := d.GraphCreate()
	require.NoError(t, err)
	require.NoError(t, d.GraphRetainUserObject(child, o, 1, true), "the caller's reference moves to the graph")
	require.ErrorIs(t, d.UserObjectRelease(o, 1), cudaerr.InvalidValue, "the caller holds none now")

	parent, err := d.GraphCreate()
	require.NoError(t, err)
	g := newGate(t)
	host, err := d.GraphAddHostNode(parent, nil, func() { <-g.ch })
	require.NoError(t, err)
	_, err = d.GraphAddChildNode(parent, []backend.GraphNode{host}, child)
	require.NoError(t, err)
	x, err := d.GraphInstantiate(parent, 0)
	require.NoError(t, err)

	require.NoError(t, d.GraphDestroy(child))
	require.NoError(t, d.GraphDestroy(parent))
	assert.True(t, live(d, o), "the executable graph's copy of the child holds it")
	require.NoError(t, d.GraphLaunch(x, s))
	require.NoError(t, d.GraphExecDestroy(x))
	assert.True(t, live(d, o), "the launch still running holds it")
	g.release()
	require.NoError(t, d.StreamSynchronize(s))
	awaitClosed(t, destroyed, "the destructor never ran")
	assert.False(t, live(d, o))
}

func TestUserObjectReferenceCounts(t *testing.T) {
	_, d, _ := open(t)
	destroyed := make(chan struct{})
	o, err := d.UserObjectCreate(func() { close(destroyed) })
	require.NoError(t, err)
	require.NoError(t, d.UserObjectRetain(o, 2))
	g, err := d.GraphCreate()
	require.NoError(t, err)
	require.NoError(t, d.GraphRetainUserObject(g, o, 2, false))
	clone, err := d.GraphClone(g)
	require.NoError(t, err)

	require.ErrorIs(t, d.GraphReleaseUserObject(g, o, 3), cudaerr.InvalidValue, "the graph holds 2")
	require.ErrorIs(t, d.UserObjectRetain(o, 0), cudaerr.InvalidValue)
	require.ErrorIs(t, d.UserObjectRelease(o, 4), cudaerr.InvalidValue, "the caller holds 3")
	_, err = d.UserObjectCreate(nil)
	require.ErrorIs(t, err, cudaerr.InvalidValue)

	require.NoError(t, d.UserObjectRelease(o, 3))
	require.NoError(t, d.GraphReleaseUserObject(g, o, 2))
	assert.True(t, live(d, o), "the clone holds its own references")
	require.NoError(t, d.GraphDestroy(clone))
	awaitClosed(t, destroyed, "the destructor never ran")
	require.ErrorIs(t, d.UserObjectRetain(o, 1), cudaerr.InvalidValue, "destroyed")
	require.NoError(t, d.GraphDestroy(g))
}
