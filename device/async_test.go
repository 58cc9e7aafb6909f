package device_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// The device's own stream is an ordinary stream: pinned copies queued on it complete in order,
// each future when the GPU is done, from any goroutine.
func TestDeviceStreamCopies(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		s := streams.Default(dev)
		require.Same(t, s, streams.Default(dev), "one stream per device")
		require.Equal(t, dev, s.Device())
		const n = 1<<16 + 3
		src, err := dev.MallocPinnedBytes(ctx, n)
		require.NoError(t, err)
		dst, err := dev.MallocPinnedBytes(ctx, n)
		require.NoError(t, err)
		for i := range src.Host() {
			src.Host()[i] = byte(i*131 + 7)
		}
		a, b := mustMalloc(t, dev, n), mustMalloc(t, dev, n)
		require.NoError(t, actor.WaitAll(ctx,
			s.CopyHostToDevice(ctx, a, src),
			s.Copy(ctx, b, a),
			s.CopyDeviceToHost(ctx, dst, b)))
		require.Equal(t, src.Host(), dst.Host())

		// Many small queued copies keep stream order: the last one wins.
		for i := range 100 {
			src.Host()[0] = byte(i)
			require.NoError(t, s.CopyHostToDevice(ctx, a.Slice(0, 64), src).Wait(ctx)) // only then may the host side change again
		}
		got := make([]byte, 1)
		download(t, got, a)
		assert.Equal(t, byte(99), got[0])
		require.ErrorIs(t, s.Close(ctx), device.ErrInvalidArgument, "the device closes its own stream")
		testdev.RequireUsable(t, dev)
	})
}

func TestDeviceStreamCopyBadInput(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		other := openDev(t, opts)
		s := streams.Default(dev)
		small, err := dev.MallocPinnedBytes(ctx, 16)
		require.NoError(t, err)
		foreign, err := other.MallocPinnedBytes(ctx, 4096)
		require.NoError(t, err)
		gone, err := dev.MallocPinnedBytes(ctx, 4096)
		require.NoError(t, err)
		require.NoError(t, gone.Close(ctx))
		buf := mustMalloc(t, dev, 4096)
		cases := []struct {
			name string
			f    *streams.Future
			want error
		}{
			{"nil host buffer", s.CopyHostToDevice(ctx, buf, nil), device.ErrInvalidArgument},
			{"host buffer too small", s.CopyHostToDevice(ctx, buf, small), device.ErrOutOfRange},
			{"host buffer of another device", s.CopyDeviceToHost(ctx, foreign, buf), device.ErrWrongDevice},
			{"closed host buffer", s.CopyDeviceToHost(ctx, gone, buf), device.ErrClosed},
			{"nil device memory", s.Copy(ctx, nil, buf), device.ErrInvalidArgument},
			{"device copy too large", s.Copy(ctx, buf.Slice(0, 8), buf), device.ErrOutOfRange},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				require.ErrorIs(t, c.f.Wait(ctx), c.want)
				testdev.RequireUsable(t, dev)
			})
		}
	})
}

func TestRange(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev := openDev(t, []device.Option{device.WithBackend(device.BackendSim)})
	s := streams.Default(dev)
	buf := mustMalloc(t, dev, 100)
	mid := buf.Slice(10, 20)
	assert.Same(t, buf, mid.Buffer())
	r := device.Range(mid, 5, 10)
	assert.Same(t, buf, r.Buffer())
	assert.Equal(t, uint64(15), r.Offset())
	assert.Equal(t, uint64(10), r.Size())
	assert.Equal(t, uint64(10), device.Size(r))
	assert.Equal(t, uint64(100), device.Size(buf))
	require.NoError(t, s.Memset(ctx, r, 7).Wait(ctx))
	got := make([]byte, 100)
	download(t, got, buf)
	for i, v := range got {
		if i >= 15 && i < 25 {
			require.Equal(t, byte(7), v, "byte %d", i)
		}
	}
	// Past the end of the Slice but inside the buffer is still out of range.
	require.ErrorIs(t, s.Memset(ctx, device.Range(mid, 15, 10), 1).Wait(ctx), device.ErrOutOfRange)
	require.ErrorIs(t, s.Memset(ctx, device.Range(mid, 25, 1), 1).Wait(ctx), device.ErrOutOfRange)
	assert.Zero(t, device.Size(nil))
	assert.Nil(t, device.Range(nil, 0, 1).Buffer())
	var none *device.Buffer
	assert.Zero(t, device.Size(none))
}
