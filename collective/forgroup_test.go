package collective

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

func TestForGroupRunsAJobOnEveryRank(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, hub := fakeDevices(t, ctx, 3)
	g, err := group.New(ctx, devs)
	require.NoError(t, err)
	defer g.Close(ctx)
	ranks, err := ForGroup(ctx, g)
	require.NoError(t, err)
	for i, d := range devs {
		require.NotNil(t, ranks.Of(d))
		assert.Equal(t, i, ranks.Of(d).Rank())
	}
	job := func(ctx context.Context, c *Comm, s *streams.Stream) error {
		b, err := alloc.Malloc[float32](ctx, s, 16)
		if err != nil {
			return err
		}
		defer b.Close(ctx)
		return AllReduce(ctx, s, c, b, b, Sum).Wait(ctx)
	}
	require.NoError(t, ranks.Run(ctx, job))
	for _, c := range ranks.Comms() {
		assert.Len(t, hub.get(c).launches, 1)
	}

	// A failing rank aborts every rank.
	boom := errors.New("boom")
	err = ranks.Run(ctx, func(ctx context.Context, c *Comm, s *streams.Stream) error {
		if c.Rank() == 1 {
			return boom
		}
		return nil
	})
	assert.ErrorIs(t, err, boom)
	assert.ErrorIs(t, ranks.Run(ctx, job), ErrAborted)
	require.NoError(t, ranks.Close(ctx))
	for _, c := range ranks.Comms() {
		assert.True(t, hub.get(c).aborted)
	}
}
