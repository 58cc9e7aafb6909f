package device_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

func TestUsageAndLimit(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, append(opts, device.WithMemoryLimit(3<<20)))
		require.Equal(t, device.Usage{Limit: 3 << 20}, dev.Stats().Memory)
		a, err := dev.MallocBytes(ctx, 2<<20)
		require.NoError(t, err)
		_, err = dev.MallocBytes(ctx, 2<<20)
		require.ErrorIs(t, err, device.ErrMemoryLimit)
		// Pinned host memory is counted but not limited: it is not the device's memory.
		h, err := dev.MallocPinnedBytes(ctx, 4<<20)
		require.NoError(t, err)
		u := dev.Stats().Memory
		require.Equal(t, device.KindUsage{Bytes: 2 << 20, Count: 1}, u.Device)
		require.Equal(t, device.KindUsage{Bytes: 4 << 20, Count: 1}, u.Pinned)
		require.Equal(t, uint64(2<<20), u.DeviceBytes())
		require.NoError(t, a.Close(ctx))
		require.NoError(t, h.Close(ctx))
		require.Equal(t, device.Usage{Limit: 3 << 20}, dev.Stats().Memory)
		testdev.RequireUsable(t, dev)
	})
}

// Buffers Close frees are uncounted too.
func TestUsageAfterClose(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev, err := device.Open(ctx, 0, opts...)
		require.NoError(t, err)
		_, err = dev.MallocBytes(ctx, 1<<20)
		require.NoError(t, err)
		_, err = dev.MallocPinnedBytes(ctx, 1<<20)
		require.NoError(t, err)
		require.NoError(t, dev.Close())
		require.Equal(t, device.Usage{}, dev.Stats().Memory)
	})
}

// Allocations racing from many goroutines never show more device memory than the limit, at
// any reading of Stats or at the end: a charge and the count Usage reports are one step.
func TestUsageNeverPassesTheLimitUnderConcurrentAllocation(t *testing.T) {
	const (
		workers = 64
		rounds  = 40
		limit   = 1 << 20
	)
	ctx := testdev.Ctx(t)
	dev := openDev(t, []device.Option{device.WithSimulator(sim.New()), device.WithMemoryLimit(limit)})
	stop := make(chan struct{})
	var seen atomic.Uint64 // the most DeviceBytes any reading showed
	var readings atomic.Int64
	watcher := make(chan struct{})
	go func() {
		defer close(watcher)
		for {
			u := dev.Stats().Memory
			readings.Add(1)
			if b := u.DeviceBytes(); b > seen.Load() {
				seen.Store(b)
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	var refused atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := streams.Default(dev)
			for r := range rounds {
				size := uint64(64<<10) + uint64((w*rounds+r)%7)<<12
				if w%2 == 0 { // charged on the actor thread
					b, err := dev.MallocBytes(ctx, size)
					if !assert.True(t, err == nil || errors.Is(err, device.ErrMemoryLimit), "%v", err) || err != nil {
						refused.Add(1)
						continue
					}
					assert.NoError(t, b.Close(ctx))
					continue
				}
				// Stream-ordered: charged on this goroutine, given back when the free is queued.
				b, _, err := alloc.MallocAsync[byte](ctx, s, int(size))
				if !assert.True(t, err == nil || errors.Is(err, device.ErrMemoryLimit), "%v", err) || err != nil {
					refused.Add(1)
					continue
				}
				assert.NoError(t, b.CloseOn(ctx, s).Wait(ctx))
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-watcher
	assert.Positive(t, refused.Load(), "the limit was reached, so the race was there to lose")
	assert.Positive(t, readings.Load())
	assert.LessOrEqual(t, seen.Load(), uint64(limit), "a reading showed more than the limit")
	assert.Equal(t, device.Usage{Limit: limit}, dev.Stats().Memory)
	testdev.RequireUsable(t, dev)
}
