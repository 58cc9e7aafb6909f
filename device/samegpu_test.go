package device_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// Two Devices opened on one GPU are two actors sharing its primary context: closing one, with
// its buffers, host buffers, module and stream still open, frees only what it made, while the
// other's launches are in flight; the other's memory, kernels and streams go on working
// (docs/design/submitters.md).
func TestHandlesOfOneGPUCloseIndependently(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		a, err := device.Open(ctx, 0, opts...)
		require.NoError(t, err)
		b := openDev(t, opts)

		// What a leaves for its Close to free.
		_ = mustMalloc(t, a, 1<<20)
		_, err = a.MallocPinnedBytes(ctx, 1<<16)
		require.NoError(t, err)
		_ = saxpyModule(t, a)
		sa, err := streams.New(ctx, a)
		require.NoError(t, err)
		require.NoError(t, sa.Memset(ctx, mustMalloc(t, a, 4096), 0).Wait(ctx))

		// b's work, in flight on a stream of its own while a closes.
		const n = 1 << 12
		saxpy, err := saxpyModule(t, b).Kernel(ctx, "saxpy")
		require.NoError(t, err)
		x, y := mustMalloc(t, b, 4*n), mustMalloc(t, b, 4*n)
		testdev.Write(t, ctx, x, filledF32(n, 1))
		testdev.Write(t, ctx, y, filledF32(n, 2))
		sb, err := streams.New(ctx, b)
		require.NoError(t, err)
		cfg := cuda.LaunchConfig{Grid: cuda.Dim(n / 256), Block: cuda.Dim(256)}
		var inFlight []*streams.Future
		for range 64 {
			inFlight = append(inFlight, sb.Launch(ctx, saxpy, cfg, int32(n), float32(1), x, y))
		}

		require.NoError(t, a.Close())
		assert.Zero(t, a.Stats().Memory.DeviceBytes(), "a freed its device memory")
		assert.Zero(t, a.Stats().Memory.Pinned.Bytes, "and its pinned memory")
		_, err = a.MallocBytes(ctx, 16)
		require.ErrorIs(t, err, device.ErrClosed)

		for i, f := range inFlight {
			require.NoError(t, f.Wait(ctx), "b's launch %d", i)
		}
		require.NoError(t, b.Err())
		require.NoError(t, a.Err(), "a clean Close fails nothing")
		got := make([]float32, n)
		testdev.Read(t, ctx, got, y)
		assert.Equal(t, filledF32(n, 66), got, "y = 2 + 64 × x: every launch of b ran, on b's memory")
		assert.Equal(t, uint64(8*n), b.Stats().Memory.DeviceBytes(), "b still holds x and y")
		require.NoError(t, sb.Close(ctx))
		require.NoError(t, b.Synchronize(ctx))
		testdev.RequireUsable(t, b)
	})
}

func filledF32(n int, v float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = v
	}
	return out
}
