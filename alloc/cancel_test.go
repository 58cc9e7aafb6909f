package alloc_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// Allocations cancelled at random points — before they are sent, while their message waits
// for the actor, while it runs, after it ran — leave nothing counted once the caller has
// closed what it got back: a caller that left holds nothing, and nothing is held for it.
func TestCancelledAllocationsLeaveNothing(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev := testdev.Open(t, ctx, []device.Option{device.WithBackend(device.BackendSim), device.WithKernelCache("")})
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	defer s.Close(ctx)
	makers := []func(ctx context.Context) (func(context.Context) error, error){
		func(ctx context.Context) (func(context.Context) error, error) {
			b, err := alloc.Malloc[float32](ctx, s, 1024)
			if err != nil {
				return nil, err
			}
			return b.Close, nil
		},
		func(ctx context.Context) (func(context.Context) error, error) {
			b, _, err := alloc.MallocAsync[float32](ctx, s, 1024)
			if err != nil {
				return nil, err
			}
			return b.Close, nil
		},
		func(ctx context.Context) (func(context.Context) error, error) {
			p, err := alloc.MallocPinned[float32](ctx, dev, 1024)
			if err != nil {
				return nil, err
			}
			return p.Close, nil
		},
		func(ctx context.Context) (func(context.Context) error, error) {
			m, err := alloc.MallocManaged[float32](ctx, dev, 1024)
			if err != nil {
				return nil, err
			}
			return m.Close, nil
		},
		func(ctx context.Context) (func(context.Context) error, error) {
			r, err := alloc.Register(ctx, dev, make([]float32, 1024))
			if err != nil {
				return nil, err
			}
			return r.Close, nil
		},
		func(ctx context.Context) (func(context.Context) error, error) {
			p, err := alloc.NewPool(ctx, dev)
			if err != nil {
				return nil, err
			}
			return p.Close, nil
		},
	}
	var wg sync.WaitGroup
	var cancelled atomic.Int64
	for g := range 6 {
		wg.Go(func() {
			for i := range 200 {
				ctx, cancel := context.WithCancel(context.Background())
				if (g+i)%3 == 0 {
					cancel()
				} else {
					go func() {
						for range (g * i) % 40 {
							runtime.Gosched()
						}
						cancel()
					}()
				}
				closeIt, err := makers[(g+i)%len(makers)](ctx)
				if err != nil {
					assert.ErrorIs(t, err, context.Canceled)
					cancelled.Add(1)
					continue
				}
				assert.NoError(t, closeIt(context.Background()))
			}
		})
	}
	wg.Wait()
	require.Positive(t, cancelled.Load())
	require.NoError(t, dev.Synchronize(ctx))
	assert.Equal(t, device.Usage{}, dev.Stats().Memory)
}
