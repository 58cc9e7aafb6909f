package group_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/internal/testleak"
	"github.com/gpuactor/gpuactor/streams"
)

// A job closes the stream the group lent it: the group lends a new stream in its place, so
// every later job, by Do or by Submit, runs on an open one, and Close reports no error.
func TestAJobClosingItsStream(t *testing.T) {
	testleak.AtCleanup(t)
	ctx := context.Background()
	devs := openSims(t, 1)
	g, err := group.New(ctx, devs, group.WithStreams(2))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close(context.Background()) }) // on a failure: before the leak check
	closer := func(ctx context.Context, _ *device.Device, s *streams.Stream) error { return s.Close(ctx) }
	require.NoError(t, g.Do(ctx, closer))
	require.NoError(t, g.Submit(ctx, closer).Wait(ctx))
	for i := range 100 {
		job := hostJob(func(*device.Device) {})
		if i%2 == 0 {
			require.NoError(t, g.Do(ctx, job), "job %d", i)
		} else {
			require.NoError(t, g.Submit(ctx, job).Wait(ctx), "job %d", i)
		}
	}
	st := g.Stats().Devices[0]
	assert.Equal(t, uint64(102), st.Done)
	assert.True(t, st.Healthy)
	require.NoError(t, g.Close(context.Background()))
}

// A stream closed after its job returned (by a goroutine the job left, here the test) is
// replaced when it is next lent.
func TestAStreamClosedAfterItsJob(t *testing.T) {
	testleak.AtCleanup(t)
	ctx := context.Background()
	g, err := group.New(ctx, openSims(t, 1), group.WithStreams(1))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close(context.Background()) })
	var lent *streams.Stream
	require.NoError(t, g.Do(ctx, func(_ context.Context, _ *device.Device, s *streams.Stream) error {
		lent = s
		return nil
	}))
	require.NoError(t, lent.Close(ctx))
	for i := range 100 {
		job := func(ctx context.Context, _ *device.Device, s *streams.Stream) error {
			if s == lent {
				return errors.New("lent the closed stream")
			}
			return s.HostFunc(ctx, func() {}).Wait(ctx)
		}
		if i%2 == 0 {
			require.NoError(t, g.Do(ctx, job), "job %d", i)
		} else {
			require.NoError(t, g.Submit(ctx, job).Wait(ctx), "job %d", i)
		}
	}
	require.NoError(t, g.Close(context.Background()))
}
