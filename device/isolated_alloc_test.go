//go:build linux

package device_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// An isolated device's actor starts its stream-ordered allocations and collects their
// addresses later, several at once. Allocations from many goroutines and streams, from the
// current pool and from a pool of their own, with one that the runtime refuses among them,
// each get memory of their own, hold what is written to them, and free.
func TestIsolatedAllocationsQueuedTogether(t *testing.T) {
	isolatedBackends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		pool, err := alloc.NewPool(ctx, dev)
		require.NoError(t, err)
		defer pool.Close(ctx)

		const goroutines, rounds, perRound = 4, 5, 6
		var wg sync.WaitGroup
		errs := make(chan error, goroutines)
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- allocRounds(t, dev, pool, g, rounds, perRound)
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.NoError(t, dev.Err(), "a refused allocation leaves the device well")
		assert.Zero(t, dev.Stats().Memory.Async.Count, "every allocation was freed")
	})
}

// allocRounds queues perRound allocations on a stream of its own without waiting, one of them
// a petabyte the runtime refuses, then fills them (the first use a kernel's, the others by
// turns a kernel's and a copy's), reads them back and frees them, rounds times.
func allocRounds(t *testing.T, dev *device.Device, pool *alloc.Pool, g, rounds, perRound int) error {
	ctx := testdev.Ctx(t)
	fill, err := saxpyModule(t, dev).Kernel(ctx, "fill_u32")
	if err != nil {
		return err
	}
	s, err := streams.New(ctx, dev)
	if err != nil {
		return err
	}
	defer s.Close(ctx)
	for r := range rounds {
		bufs := make([]*alloc.Buffer[uint32], perRound)
		for i := range bufs {
			var opts []alloc.AllocOption
			if i%2 == 1 {
				opts = append(opts, alloc.FromPool(pool))
			}
			bufs[i], _, err = alloc.MallocAsync[uint32](ctx, s, 256*(i+1), opts...)
			if err != nil {
				return err
			}
		}
		huge, hugeFut, err := alloc.MallocAsync[byte](ctx, s, 1<<50)
		if err != nil {
			return err
		}
		var fills []*streams.Future
		for i, b := range bufs {
			if i%2 == 0 {
				n := b.Len()
				cfg := cuda.LaunchConfig{Grid: cuda.Dim(uint32((n + 255) / 256)), Block: cuda.Dim(256)}
				fills = append(fills, s.Launch(ctx, fill, cfg, b, uint32(g<<24|r<<16|i<<12), int64(n)))
				continue
			}
			in := make([]uint32, b.Len())
			for j := range in {
				in[j] = uint32(g<<24 | r<<16 | i<<12 | j)
			}
			fills = append(fills, streams.CopyToDevice(ctx, s, b, in))
		}
		for _, f := range fills {
			if err := f.Wait(ctx); err != nil {
				return err
			}
		}
		for i, b := range bufs {
			out := make([]uint32, b.Len())
			if err := streams.CopyFromDevice(ctx, s, out, b).Wait(ctx); err != nil {
				return err
			}
			for j, v := range out {
				if want := uint32(g<<24 | r<<16 | i<<12 | j); v != want {
					return fmt.Errorf("goroutine %d round %d buffer %d element %d: %#x, want %#x", g, r, i, j, v, want)
				}
			}
		}
		if err := hugeFut.Wait(ctx); err == nil {
			return fmt.Errorf("goroutine %d round %d: the petabyte was allocated", g, r)
		}
		if err := huge.Close(ctx); !assert.ErrorIs(t, err, device.ErrAllocFailed) {
			return fmt.Errorf("closing the petabyte: %v", err)
		}
		for _, b := range bufs {
			if err := b.CloseOn(ctx, nil).Wait(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}
