package device_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
)

func TestUsageAndLimit(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, append(opts, device.WithMemoryLimit(3<<20)))
		require.Equal(t, device.Usage{Limit: 3 << 20}, dev.Usage())
		a, err := dev.Malloc(ctx, 2<<20)
		require.NoError(t, err)
		_, err = dev.Malloc(ctx, 2<<20)
		require.ErrorIs(t, err, device.ErrMemoryLimit)
		// Pinned host memory is counted but not limited: it is not the device's memory.
		h, err := dev.MallocHost(ctx, 4<<20)
		require.NoError(t, err)
		u := dev.Usage()
		require.Equal(t, device.KindUsage{Bytes: 2 << 20, Count: 1}, u.Device)
		require.Equal(t, device.KindUsage{Bytes: 4 << 20, Count: 1}, u.Pinned)
		require.Equal(t, uint64(2<<20), u.DeviceBytes())
		require.NoError(t, a.Free(ctx))
		require.NoError(t, h.Free(ctx))
		require.Equal(t, device.Usage{Limit: 3 << 20}, dev.Usage())
		requireUsable(t, dev)
	})
}

// Buffers Close frees are uncounted too.
func TestUsageAfterClose(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev, err := device.Open(ctx, 0, opts...)
		require.NoError(t, err)
		_, err = dev.Malloc(ctx, 1<<20)
		require.NoError(t, err)
		_, err = dev.MallocHost(ctx, 1<<20)
		require.NoError(t, err)
		require.NoError(t, dev.Close())
		require.Equal(t, device.Usage{}, dev.Usage())
	})
}

func TestPinnedPoolConcurrent(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		pool := dev.PinnedPool()
		require.Same(t, pool, dev.PinnedPool())
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 20 {
					h, err := pool.Get(ctx, uint64(1+(w*20+i)%300_000))
					if err != nil {
						errs <- err
						return
					}
					b := h.Bytes()
					b[0], b[len(b)-1] = byte(w), byte(i)
					if err := pool.Put(ctx, h); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		st := pool.Stats()
		require.Equal(t, uint64(160), st.Hits+st.Misses)
		require.Positive(t, st.Hits)
		require.Equal(t, uint64(st.CachedBuffers), dev.Usage().Pinned.Count)
		require.NoError(t, pool.Trim(ctx))
		require.Zero(t, dev.Usage().Pinned.Count)
		_, err := pool.Get(ctx, 0)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		require.ErrorIs(t, pool.Put(ctx, nil), device.ErrInvalidArgument)
	})
}
