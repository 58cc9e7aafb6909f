package sim

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Nodes with no path between them run concurrently: two host nodes that each wait for the
// other finish only if they overlap; the node after both runs after both.
func TestGraphIndependentNodesRunConcurrently(t *testing.T) {
	_, d, _ := open(t)
	s := mkStream(t, d)
	g, err := d.GraphCreate()
	require.NoError(t, err)
	a, b := make(chan struct{}), make(chan struct{})
	var timedOut atomic.Bool
	meet := func(mine, theirs chan struct{}) func() {
		return func() {
			close(mine)
			select {
			case <-theirs:
			case <-time.After(5 * time.Second):
				timedOut.Store(true)
			}
		}
	}
	na, err := d.GraphAddHostNode(g, nil, meet(a, b))
	require.NoError(t, err)
	nb, err := d.GraphAddHostNode(g, nil, meet(b, a))
	require.NoError(t, err)
	var after atomic.Int32
	_, err = d.GraphAddHostNode(g, []backend.GraphNode{na, nb}, func() {
		select {
		case <-a:
			select {
			case <-b:
				after.Store(1)
			default:
			}
		default:
		}
	})
	require.NoError(t, err)
	x, err := d.GraphInstantiate(g, 0)
	require.NoError(t, err)
	require.NoError(t, d.GraphLaunch(x, s))
	require.NoError(t, d.StreamSynchronize(s))
	assert.False(t, timedOut.Load(), "the independent nodes did not overlap")
	assert.Equal(t, int32(1), after.Load(), "the joining node ran after both")
}

// Capture turns stream work into nodes, follows forks and joins through events, and refuses
// to end on a stream that did not begin it.
func TestCaptureForkJoinAndMisuse(t *testing.T) {
	_, d, d1 := open(t)
	s1, s2 := mkStream(t, d), mkStream(t, d)
	ev, err := d.EventCreate(backend.EventDisableTiming)
	require.NoError(t, err)
	p := malloc(t, d, 64)

	require.NoError(t, d.StreamBeginCapture(s1, backend.CaptureThreadLocal))
	require.Error(t, d.StreamBeginCapture(s1, backend.CaptureThreadLocal), "already capturing")
	require.NoError(t, d.Memset(p, 1, 64, s1))
	require.NoError(t, d.EventRecord(ev, s1))
	require.NoError(t, d.StreamWaitEvent(s2, ev))
	info, err := d.StreamCaptureInfo(s2)
	require.NoError(t, err)
	assert.Equal(t, backend.CaptureActive, info.Status, "s2 joined by waiting")
	require.Len(t, info.Deps, 1)
	require.NoError(t, d.Memset(p, 2, 32, s2))
	require.NoError(t, d.EventRecord(ev, s2))
	_, err = d.StreamEndCapture(s2)
	require.ErrorIs(t, err, cudaerr.StreamCaptureUnmatched)
	require.NoError(t, d.StreamWaitEvent(s1, ev))
	g, err := d.StreamEndCapture(s1)
	require.ErrorIs(t, err, cudaerr.StreamCaptureInvalidated, "ending on the wrong stream invalidated it")
	assert.Zero(t, g)

	// Again, properly.
	require.NoError(t, d.StreamBeginCapture(s1, backend.CaptureRelaxed))
	require.NoError(t, d.Memset(p, 1, 64, s1))
	require.NoError(t, d.EventRecord(ev, s1))
	require.NoError(t, d.StreamWaitEvent(s2, ev))
	require.NoError(t, d.Memset(p, 2, 32, s2))
	require.NoError(t, d.EventRecord(ev, s2))
	require.NoError(t, d.StreamWaitEvent(s1, ev))
	g, err = d.StreamEndCapture(s1)
	require.NoError(t, err)
	nodes, err := d.GraphNodes(g)
	require.NoError(t, err)
	require.Len(t, nodes, 2)
	from, to, err := d.GraphEdges(g)
	require.NoError(t, err)
	assert.Equal(t, []backend.GraphNode{nodes[0]}, from)
	assert.Equal(t, []backend.GraphNode{nodes[1]}, to)
	for _, st := range []backend.Stream{s1, s2} {
		info, err := d.StreamCaptureInfo(st)
		require.NoError(t, err)
		assert.Equal(t, backend.CaptureNone, info.Status)
	}
	out := make([]byte, 64)
	x, err := d.GraphInstantiate(g, 0)
	require.NoError(t, err)
	require.NoError(t, d.GraphLaunch(x, s1))
	require.NoError(t, d.StreamSynchronize(s1))
	host, err := d.HostAlloc(64, 0)
	require.NoError(t, err)
	require.NoError(t, d.CopyDtoH(host, p, 64, s1))
	require.NoError(t, d.StreamSynchronize(s1))
	copy(out, unsafe.Slice((*byte)(host), 64))
	assert.Equal(t, byte(2), out[0])
	assert.Equal(t, byte(1), out[63])

	// Another device's graph handles mean nothing here.
	_, err = d1.GraphInstantiate(g, 0)
	require.ErrorIs(t, err, cudaerr.InvalidValue)
	_, err = d1.GraphAddEmptyNode(g, nil)
	require.ErrorIs(t, err, cudaerr.InvalidValue)
	require.ErrorIs(t, d1.GraphLaunch(x, mkStream(t, d1)), cudaerr.InvalidValue)

	dot := filepath.Join(t.TempDir(), "g.dot")
	require.NoError(t, d.GraphDebugDot(g, dot))
	b, err := os.ReadFile(dot)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(b), "digraph"))
	assert.Contains(t, string(b), "n0 -> n1")
	require.NoError(t, d.GraphExecDestroy(x))
	require.ErrorIs(t, d.GraphLaunch(x, s1), cudaerr.InvalidValue)
	require.NoError(t, d.GraphDestroy(g))
	require.ErrorIs(t, d.GraphDestroy(g), cudaerr.InvalidValue)
}

func TestGraphCycleRefused(t *testing.T) {
	_, d, _ := open(t)
	g, err := d.GraphCreate()
	require.NoError(t, err)
	a, err := d.GraphAddEmptyNode(g, nil)
	require.NoError(t, err)
	b, err := d.GraphAddEmptyNode(g, []backend.GraphNode{a})
	require.NoError(t, err)
	require.ErrorIs(t, d.GraphAddDependencies(g, []backend.GraphNode{b}, []backend.GraphNode{a}), cudaerr.InvalidValue)
	require.ErrorIs(t, d.GraphAddDependencies(g, []backend.GraphNode{a}, []backend.GraphNode{a}), cudaerr.InvalidValue)
	_, err = d.GraphAddEmptyNode(g, []backend.GraphNode{a, a})
	require.ErrorIs(t, err, cudaerr.InvalidValue, "a dependency listed twice")
}
