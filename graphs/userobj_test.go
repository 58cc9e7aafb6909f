package graphs_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/testdev"
)

func released(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// A user object moved to a graph lives while the graph, its clone, a graph it is the child of
// and an executable graph made from that hold it, and is released once, after all are closed.
func TestUserObjectLivesWithItsGraphs(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		done := make(chan struct{})
		o, err := graphs.NewUserObject(f.Ctx, f.Dev, func() { close(done) })
		require.NoError(t, err)
		out := f.buffer(t, n)
		testdev.Write(t, f.Ctx, out, make([]uint32, n))

		g := f.graph(t)
		_, err = g.AddKernel(f.Ctx, nil, f.add, cfg(n), out, uint32(1), int32(n))
		require.NoError(t, err)
		require.NoError(t, g.TakeUserObject(f.Ctx, o), "the caller's reference moves to g")
		clone, err := g.Clone(f.Ctx)
		require.NoError(t, err)
		parent := f.graph(t)
		_, err = parent.AddChild(f.Ctx, nil, g)
		require.NoError(t, err)
		x, err := parent.Instantiate(f.Ctx)
		require.NoError(t, err)

		require.NoError(t, g.Close(f.Ctx))
		require.NoError(t, parent.Close(f.Ctx))
		require.NoError(t, clone.Close(f.Ctx))
		f.launch(t, x, f.Stream(t))
		assert.Equal(t, testdev.Filled(n, 1), f.read(t, out))
		assert.False(t, released(done), "the executable graph still holds it")
		require.NoError(t, x.Close(f.Ctx))
		require.NoError(t, f.Dev.Synchronize(f.Ctx))
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the user object was never released")
		}
	})
}

func TestUserObjectReferences(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		done := make(chan struct{})
		o, err := graphs.NewUserObject(f.Ctx, f.Dev, func() { close(done) })
		require.NoError(t, err)
		assert.Same(t, f.Dev, o.Device())
		require.NoError(t, o.Retain(f.Ctx))
		g := f.graph(t)
		require.NoError(t, g.RetainUserObject(f.Ctx, o))
		require.NoError(t, o.Release(f.Ctx))
		require.NoError(t, o.Release(f.Ctx))
		assert.False(t, released(done), "g holds a reference")
		require.NoError(t, g.ReleaseUserObject(f.Ctx, o))
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the user object was never released")
		}

		_, err = graphs.NewUserObject(f.Ctx, f.Dev, nil)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		require.ErrorIs(t, g.RetainUserObject(f.Ctx, nil), device.ErrInvalidArgument)
		var none *graphs.UserObject
		require.ErrorIs(t, none.Release(f.Ctx), device.ErrInvalidArgument)
	})
}
