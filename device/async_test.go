package device_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
)

func TestAsyncCopies(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		const n = 1<<16 + 3
		src, err := dev.MallocHost(ctx, n)
		require.NoError(t, err)
		dst, err := dev.MallocHost(ctx, n)
		require.NoError(t, err)
		for i := range src.Bytes() {
			src.Bytes()[i] = byte(i*131 + 7)
		}
		a, b := mustMalloc(t, dev, n), mustMalloc(t, dev, n)
		fs := []interface{ Err() error }{
			device.CopyToDeviceAsync(ctx, a, src),
			device.CopyAsync(ctx, b, a),
			device.CopyFromDeviceAsync(ctx, dst, b),
		}
		require.NoError(t, dev.Synchronize(ctx))
		for _, f := range fs {
			require.NoError(t, f.Err())
		}
		require.Equal(t, src.Bytes(), dst.Bytes())

		// Many small queued copies keep device order: the last one wins.
		for i := range 100 {
			src.Bytes()[0] = byte(i)
			_, err := device.CopyToDeviceAsync(ctx, a.Slice(0, 64), src).Await(ctx)
			require.NoError(t, err)
			require.NoError(t, dev.Synchronize(ctx)) // only then may the host side change again
		}
		got := make([]byte, 1)
		require.NoError(t, device.CopyFromDevice(ctx, got, a))
		assert.Equal(t, byte(99), got[0])
	})
}

func TestAsyncCopyBadInput(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		other := openDev(t, opts)
		small, err := dev.MallocHost(ctx, 16)
		require.NoError(t, err)
		foreign, err := other.MallocHost(ctx, 4096)
		require.NoError(t, err)
		gone, err := dev.MallocHost(ctx, 4096)
		require.NoError(t, err)
		require.NoError(t, gone.Free(ctx))
		buf := mustMalloc(t, dev, 4096)
		cases := []struct {
			name string
			err  func() error
			want error
		}{
			{"nil host buffer", func() error { _, err := device.CopyToDeviceAsync(ctx, buf, nil).Await(ctx); return err }, device.ErrInvalidArgument},
			{"host buffer too small", func() error { _, err := device.CopyToDeviceAsync(ctx, buf, small).Await(ctx); return err }, device.ErrOutOfRange},
			{"host buffer of another device", func() error { _, err := device.CopyFromDeviceAsync(ctx, foreign, buf).Await(ctx); return err }, device.ErrWrongDevice},
			{"freed host buffer", func() error { _, err := device.CopyFromDeviceAsync(ctx, gone, buf).Await(ctx); return err }, device.ErrFreed},
			{"nil device memory", func() error { _, err := device.CopyAsync(ctx, nil, buf).Await(ctx); return err }, device.ErrInvalidArgument},
			{"device copy too large", func() error { _, err := device.CopyAsync(ctx, buf.Slice(0, 8), buf).Await(ctx); return err }, device.ErrOutOfRange},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				require.ErrorIs(t, c.err(), c.want)
				requireUsable(t, dev)
			})
		}
	})
}

func TestRange(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev := openDev(t, []device.Option{device.WithBackend(device.BackendSim)})
	buf := mustMalloc(t, dev, 100)
	mid := buf.Slice(10, 20)
	r := device.Range(mid, 5, 10)
	assert.Equal(t, uint64(15), r.Offset())
	assert.Equal(t, uint64(10), device.Size(r))
	require.NoError(t, device.Memset(ctx, r, 7))
	got := make([]byte, 100)
	require.NoError(t, device.CopyFromDevice(ctx, got, buf))
	for i, v := range got {
		if i >= 15 && i < 25 {
			require.Equal(t, byte(7), v, "byte %d", i)
		}
	}
	// Past the end of the Slice but inside the buffer is still out of range.
	require.ErrorIs(t, device.Memset(ctx, device.Range(mid, 15, 10), 1), device.ErrOutOfRange)
	require.ErrorIs(t, device.Memset(ctx, device.Range(mid, 25, 1), 1), device.ErrOutOfRange)
	assert.Zero(t, device.Size(nil))
}
