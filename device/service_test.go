package device_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testleak"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// request is one request of a service: y = a·x + y on the device, through a stream-ordered
// allocation, two staged uploads, a launch and a staged download, checked, with the buffers
// freed whatever happens (on a context that outlives the request's own).
func request(ctx context.Context, s *streams.Stream, saxpy *device.Kernel, n int, a float32) error {
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i), float32(2*i)
	}
	free := context.WithoutCancel(ctx)
	bx, _, err := alloc.MallocAsync[float32](ctx, s, n)
	if err != nil {
		return err
	}
	defer bx.Close(free)
	by, _, err := alloc.MallocAsync[float32](ctx, s, n)
	if err != nil {
		return err
	}
	defer by.Close(free)
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(uint32(n+255) / 256), Block: cuda.Dim(256)}
	if err := actor.WaitAll(ctx,
		streams.CopyToDevice(ctx, s, bx, x),
		streams.CopyToDevice(ctx, s, by, y),
		s.Launch(ctx, saxpy, cfg, int32(n), a, bx, by),
		streams.CopyFromDevice(ctx, s, y, by),
	); err != nil {
		return err
	}
	for i, v := range y {
		if want := a*float32(i) + float32(2*i); v != want {
			return fmt.Errorf("y[%d] = %v, want %v", i, v, want)
		}
	}
	return nil
}

// settled waits until the device holds nothing for requests: no device or stream-ordered
// memory, no staging slot lent, nothing in flight, and no more goroutines than before.
func settled(t *testing.T, dev *device.Device, goroutines int) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		st := dev.Stats()
		assert.Zero(c, st.Memory.Device.Count, "device buffers")
		assert.Zero(c, st.Memory.Async.Count, "stream-ordered buffers")
		assert.Zero(c, st.Staging.InUseBytes, "staging bytes lent")
		assert.Zero(c, st.InFlight, "operations in flight")
	}, time.Minute, 5*time.Millisecond)
	testleak.Settle(t, goroutines)
}

// Thousands of requests from 32 goroutines, a third of them cancelled at a random moment:
// every request either succeeds or returns its context's error, and once they are done
// nothing is left behind.
func TestCancelledRequestsLeaveNothing(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev := testdev.Open(t, ctx, []device.Option{device.WithSimulator(sim.New()), device.WithKernelCache("")})
	saxpy, err := saxpyModule(t, dev).Kernel(ctx, "saxpy")
	require.NoError(t, err)
	goroutines := testleak.Base()
	const workers, each = 32, 100
	var ok, cancelled atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		s, err := streams.New(ctx, dev)
		require.NoError(t, err)
		defer s.Close(ctx)
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for range each {
				rctx, cancel := context.WithCancel(ctx)
				if rng.IntN(3) == 0 {
					time.AfterFunc(time.Duration(rng.IntN(200))*time.Microsecond, cancel)
				}
				err := request(rctx, s, saxpy, 1000+rng.IntN(50000), float32(w))
				cancel()
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, context.Canceled):
					cancelled.Add(1)
				default:
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	assert.Equal(t, int64(workers*each), ok.Load()+cancelled.Load())
	assert.Positive(t, ok.Load())
	assert.Positive(t, cancelled.Load())
	t.Logf("%d requests: %d done, %d cancelled", workers*each, ok.Load(), cancelled.Load())
	settled(t, dev, goroutines)
}

// A Shutdown under load loses no accepted request silently: each request either completes, is
// refused because the device closed, or fails with ErrShutdown once the deadline passes.
func TestShutdownUnderLoad(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev, err := device.Open(ctx, 0, device.WithSimulator(sim.New()), device.WithKernelCache(""))
	require.NoError(t, err)
	saxpy, err := saxpyModule(t, dev).Kernel(ctx, "saxpy")
	require.NoError(t, err)
	const workers = 32
	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	started := make(chan struct{}, workers)
	for w := range workers {
		s, err := streams.New(ctx, dev)
		require.NoError(t, err)
		wg.Go(func() {
			started <- struct{}{}
			for {
				err := request(ctx, s, saxpy, 100000, float32(w))
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, device.ErrClosed):
					refused.Add(1)
					return
				default:
					errs[w] = err
					return
				}
			}
		})
	}
	for range workers {
		<-started
	}
	require.Eventually(t, func() bool { return ok.Load() > 0 }, time.Minute, time.Millisecond, "under load")
	sctx, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
	defer cancel()
	err = dev.Shutdown(sctx)
	if err != nil {
		require.ErrorIs(t, err, context.DeadlineExceeded)
	}
	wg.Wait() // every request came back: none hangs
	require.NoError(t, errors.Join(errs...))
	assert.Positive(t, ok.Load())
	assert.Equal(t, int64(workers), refused.Load(), "each worker's last request was refused or failed by the shutdown")
	require.NoError(t, dev.Close(), "the device finished closing")
	assert.Equal(t, device.Usage{}, dev.Stats().Memory, "everything freed")
}

// Shutdown waits for the work sent before it until its deadline; past it, the futures still
// waiting on the GPU fail at once with ErrShutdown, and the device finishes closing once the
// GPU is done.
func TestShutdownDeadline(t *testing.T) {
	t.Run("in time", func(t *testing.T) {
		ctx := testdev.Ctx(t)
		dev, err := device.Open(ctx, 0, device.WithSimulator(sim.New()), device.WithKernelCache(""))
		require.NoError(t, err)
		s, err := streams.New(ctx, dev)
		require.NoError(t, err)
		ran := atomic.Bool{}
		f := s.HostFunc(ctx, func() { time.Sleep(20 * time.Millisecond); ran.Store(true) })
		require.NoError(t, dev.Shutdown(ctx))
		require.NoError(t, f.Wait(ctx))
		assert.True(t, ran.Load())
		assert.True(t, dev.Stats().Closed)
		require.ErrorIs(t, s.HostFunc(ctx, func() {}).Wait(ctx), device.ErrClosed, "no new work")
		require.NoError(t, dev.Shutdown(ctx), "idempotent")
	})
	t.Run("past it", func(t *testing.T) {
		ctx := testdev.Ctx(t)
		dev, err := device.Open(ctx, 0, device.WithSimulator(sim.New()), device.WithKernelCache(""))
		require.NoError(t, err)
		s, err := streams.New(ctx, dev)
		require.NoError(t, err)
		gate := make(chan struct{})
		held := s.HostFunc(ctx, func() { <-gate })
		buf, err := dev.MallocBytes(ctx, 1<<20)
		require.NoError(t, err)
		behind := s.Memset(ctx, buf, 7)
		sctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
		defer cancel()
		err = dev.Shutdown(sctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		for _, f := range []*streams.Future{held, behind} {
			err := f.Wait(ctx) // fails promptly, though the GPU has not got there
			require.ErrorIs(t, err, device.ErrShutdown)
			require.ErrorIs(t, err, device.ErrClosed)
		}
		assert.False(t, dev.Stats().Memory == device.Usage{}, "not freed while the GPU may still use it")
		close(gate)
		require.NoError(t, dev.Close(), "the device finished closing once the GPU was done")
		assert.Equal(t, device.Usage{}, dev.Stats().Memory, "and freed everything")
	})
}
