package streams_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// A host function that calls what would wait for itself gets ErrInHostFunc at once, instead
// of hanging the stream for good; other goroutines' calls are unaffected meanwhile.
func TestWaitsFromAHostFunctionFail(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := testdev.Open(t, ctx, opts)
		s, err := streams.New(ctx, dev)
		require.NoError(t, err)
		defer s.Close(ctx)
		other, err := streams.New(ctx, dev)
		require.NoError(t, err)
		var errs [5]error
		release := make(chan struct{})
		outside := make(chan error, 1)
		f := s.HostFunc(ctx, func() {
			errs[0] = dev.Synchronize(ctx)
			errs[1] = dev.Close()
			errs[2] = dev.Shutdown(ctx)
			errs[3] = s.Synchronize(ctx)
			errs[4] = other.Close(ctx)
			go func() { outside <- other.Synchronize(context.Background()) }() // not in the host function
			<-release
		})
		require.NoError(t, <-outside, "another goroutine may wait meanwhile")
		close(release)
		require.NoError(t, f.Wait(ctx))
		for i, err := range errs {
			assert.ErrorIs(t, err, device.ErrInHostFunc, "call %d", i)
		}
		assert.ErrorContains(t, errs[0], "Synchronize from a host function")
		require.NoError(t, other.Close(ctx))
		require.NoError(t, dev.Synchronize(ctx), "the device goes on")
	})
}
