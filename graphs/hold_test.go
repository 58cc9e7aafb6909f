package graphs_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// A launch whose event record or wait node's event was closed is refused, naming the node's
// kind, and queues nothing; the Exec and the graph stay usable once the node has an open event.
func TestClosedEventOfANodeRefusesTheLaunch(t *testing.T) {
	for _, kind := range []graphs.Kind{graphs.EventRecordNode, graphs.EventWaitNode} {
		t.Run(kind.String(), func(t *testing.T) {
			eachBackend(t, func(t *testing.T, f *fixture) {
				s := f.Stream(t)
				a := f.buffer(t, n)
				ev, err := streams.NewEvent(f.Ctx, f.Dev)
				require.NoError(t, err)
				g := f.graph(t)
				var node *graphs.Node
				if kind == graphs.EventRecordNode {
					node, err = g.AddEventRecord(f.Ctx, nil, ev)
				} else {
					node, err = g.AddEventWait(f.Ctx, nil, ev)
				}
				require.NoError(t, err)
				_, err = g.AddKernel(f.Ctx, graphs.After(node), f.add, cfg(n), a, uint32(1), int32(n))
				require.NoError(t, err)
				x, err := g.Instantiate(f.Ctx)
				require.NoError(t, err)
				f.launch(t, x, s)

				require.NoError(t, ev.Close(f.Ctx))
				_, err = x.Launch(f.Ctx, s).Await(f.Ctx)
				require.ErrorIs(t, err, device.ErrClosed)
				assert.Contains(t, err.Error(), kind.String())
				_, err = x.LaunchN(f.Ctx, s, 3).Await(f.Ctx)
				require.ErrorIs(t, err, device.ErrClosed)
				assert.Equal(t, testdev.Filled(n, 1), f.read(t, a), "a refused launch ran nothing")

				// A new Exec of the same graph is refused too: its node still names the event,
				// which the runtime would read while instantiating.
				_, err = g.Instantiate(f.Ctx)
				require.ErrorIs(t, err, device.ErrClosed)
				require.ErrorIs(t, x.Update(f.Ctx, g), device.ErrClosed)
				require.NoError(t, x.Close(f.Ctx))
			})
		})
	}
}

// A child graph's event nodes are checked by the graph embedding it.
func TestClosedEventOfAChildRefusesTheParentsLaunch(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		ev, err := streams.NewEvent(f.Ctx, f.Dev)
		require.NoError(t, err)
		child := f.graph(t)
		_, err = child.AddEventRecord(f.Ctx, nil, ev)
		require.NoError(t, err)
		parent := f.graph(t)
		_, err = parent.AddChild(f.Ctx, nil, child)
		require.NoError(t, err)
		x, err := parent.Instantiate(f.Ctx)
		require.NoError(t, err)
		f.launch(t, x, s)
		require.NoError(t, ev.Close(f.Ctx))
		_, err = x.Launch(f.Ctx, s).Await(f.Ctx)
		require.ErrorIs(t, err, device.ErrClosed)
		require.NoError(t, x.Close(f.Ctx))
	})
}

// An Exec given an event through SetEvent checks it too.
func TestClosedEventSetOnAnExecRefusesItsLaunch(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		e1, err := streams.NewEvent(f.Ctx, f.Dev)
		require.NoError(t, err)
		e2, err := streams.NewEvent(f.Ctx, f.Dev)
		require.NoError(t, err)
		g := f.graph(t)
		rec, err := g.AddEventRecord(f.Ctx, nil, e1)
		require.NoError(t, err)
		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		require.NoError(t, x.SetEvent(f.Ctx, rec, e2))
		f.launch(t, x, s)
		require.NoError(t, e2.Close(f.Ctx))
		_, err = x.Launch(f.Ctx, s).Await(f.Ctx)
		require.ErrorIs(t, err, device.ErrClosed)
		require.NoError(t, x.Close(f.Ctx))
	})
}
