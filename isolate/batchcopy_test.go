package isolate_test

import (
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/isolate"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// A batch crosses to the worker in one call, its pinned sides translated to the worker's
// mapping of them.
func TestCopyBatchOnAnIsolatedDevice(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev, err := device.Open(ctx, 0, device.WithSimulator(sim.New()), device.WithKernelCache(""),
		device.Isolated(isolate.WithStderr(io.Discard)))
	require.NoError(t, err)
	defer dev.Close()
	in, err := dev.MallocPinnedBytes(ctx, 256)
	require.NoError(t, err)
	out, err := dev.MallocPinnedBytes(ctx, 256)
	require.NoError(t, err)
	for i := range in.Host() {
		in.Host()[i] = byte(255 - i)
	}
	a, err := dev.MallocBytes(ctx, 256)
	require.NoError(t, err)
	b, err := dev.MallocBytes(ctx, 256)
	require.NoError(t, err)
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	defer s.Close(ctx) //nolint:errcheck

	s.CopyBatch(ctx, streams.CopyFromHost(a.Slice(0, 128), in, 128), streams.CopyFromHost(a.Slice(128, 128), in, 0))
	s.CopyBatch(ctx, streams.CopyDevice(b, a))
	require.NoError(t, s.CopyBatch(ctx, streams.CopyToHost(out, 0, b)).Wait(ctx))
	assert.Equal(t, in.Host()[128:], out.Host()[:128])
	assert.Equal(t, in.Host()[:128], out.Host()[128:])

	err = s.CopyBatch(ctx, streams.CopyDevice(b, a), streams.CopyToHost(out, 200, b)).Wait(ctx)
	require.ErrorIs(t, err, device.ErrOutOfRange)
	var be *streams.BatchError
	require.True(t, errors.As(err, &be))
	assert.Equal(t, 1, be.Index)
	require.NoError(t, s.Synchronize(ctx), "the device stays usable")
}
