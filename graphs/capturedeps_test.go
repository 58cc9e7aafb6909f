package graphs_test

import (
	"context"

	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/streams"
)

// Two branches captured on one stream: the second memset is set to depend on the point
// before the first, and the third joins both.
func TestCaptureDependenciesBranchAndJoin(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		a, b := f.buffer(t, 256), f.buffer(t, 256)
		capturing, err := graphs.IsCapturing(f.Ctx, s)
		require.NoError(t, err)
		assert.False(t, capturing)
		c, err := graphs.BeginCapture(f.Ctx, s)
		require.NoError(t, err)
		capturing, err = graphs.IsCapturing(f.Ctx, s)
		require.NoError(t, err)
		assert.True(t, capturing)
		start, err := c.Dependencies(f.Ctx)
		require.NoError(t, err)
		assert.Zero(t, start.Len())
		require.NoError(t, s.Memset(f.Ctx, a, 1).Err())
		afterA, err := c.Dependencies(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, afterA.Len())

		require.NoError(t, c.SetDependencies(f.Ctx, start))
		require.NoError(t, s.Memset(f.Ctx, b, 2).Err())
		require.NoError(t, c.AddDependencies(f.Ctx, afterA))
		joined, err := c.Dependencies(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, 2, joined.Len())
		require.NoError(t, s.Memset(f.Ctx, a.Slice(0, 64), 3).Err())
		g, err := c.End(f.Ctx)
		require.NoError(t, err)
		defer g.Close(f.Ctx)

		desc, err := g.Describe(f.Ctx)
		require.NoError(t, err)
		require.Len(t, desc.Nodes, 3)
		roots := 0
		for _, n := range desc.Nodes {
			if len(n.Deps) == 0 {
				roots++
			}
		}
		assert.Equal(t, 2, roots, "the two memsets are parallel branches:\n%s", desc)
		assert.Len(t, desc.Nodes[2].Deps, 2, "the last joins both:\n%s", desc)

		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		defer x.Close(f.Ctx)
		require.NoError(t, x.Launch(f.Ctx, s).Wait(f.Ctx))
		got := make([]byte, 256)
		require.NoError(t, streams.CopyFromDevice(f.Ctx, s, got, a).Wait(f.Ctx))
		assert.Equal(t, byte(3), got[0])
		assert.Equal(t, byte(1), got[255])
	})
}

func TestCaptureDependenciesBadInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s1, s2 := f.Stream(t), f.Stream(t)
		buf := f.buffer(t, 64)
		c1, err := graphs.BeginCapture(f.Ctx, s1)
		require.NoError(t, err)
		c2, err := graphs.BeginCapture(f.Ctx, s2)
		require.NoError(t, err)
		require.NoError(t, s2.Memset(f.Ctx, buf, 1).Err())
		p2, err := c2.Dependencies(f.Ctx)
		require.NoError(t, err)
		assert.ErrorIs(t, c1.SetDependencies(f.Ctx, p2), device.ErrInvalidArgument, "a point of another capture")
		require.NoError(t, c1.Abort(f.Ctx))
		require.NoError(t, c2.Abort(f.Ctx))
		_, err = c1.Dependencies(f.Ctx)
		assert.ErrorIs(t, err, device.ErrInvalidArgument, "an ended capture")
		assert.ErrorIs(t, c1.AddDependencies(f.Ctx), device.ErrInvalidArgument)
	})
}

// An external record in a capture becomes an event record node that every replay runs.
func TestRecordExternalInCapture(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		e, err := streams.NewEvent(f.Ctx, f.Dev)
		require.NoError(t, err)
		buf := f.buffer(t, 64)
		g, err := graphs.Capture(f.Ctx, s, func(ctx context.Context) error {
			if err := s.Memset(ctx, buf, 1).Err(); err != nil {
				return err
			}
			return s.RecordExternal(ctx, e).Err()
		})
		require.NoError(t, err)
		defer g.Close(f.Ctx)
		desc, err := g.Describe(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, desc.Count(graphs.EventRecordNode), "%s", desc)
		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		defer x.Close(f.Ctx)
		require.NoError(t, x.Launch(f.Ctx, s).Wait(f.Ctx))
		require.NoError(t, e.Synchronize(f.Ctx))
	})
}
