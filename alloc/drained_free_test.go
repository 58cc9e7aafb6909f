package alloc_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// memFree is the device's free memory as the runtime reports it. MemInfo is a message to the
// device's actor, so every message sent before it has run when it returns.
func memFree(t *testing.T, ctx context.Context, d *device.Device) uint64 {
	t.Helper()
	free, _, err := d.MemInfo(ctx)
	require.NoError(t, err)
	return free
}

// TestFreeAfterItsLastUseCompletedTakesNoWatermark: a Malloc buffer whose last use was
// awaited is freed as its free's message runs, the stream found drained: no watermark is
// recorded for it, and the memory is back when the future completes.
func TestFreeAfterItsLastUseCompletedTakesNoWatermark(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		const n = 1 << 18 // 1 MiB of uint32
		before := memFree(t, f.Ctx, f.Dev)
		b, err := alloc.Malloc[uint32](f.Ctx, s, n)
		require.NoError(t, err)
		require.NoError(t, s.Memset(f.Ctx, b, 7).Wait(f.Ctx))
		marks := f.Dev.Stats().Tracker.Watermarks

		_, err = b.CloseOn(f.Ctx, nil).Await(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, marks, f.Dev.Stats().Tracker.Watermarks, "a drained stream needs no watermark")
		assert.Equal(t, before, memFree(t, f.Ctx, f.Dev), "the memory is freed")
		assert.ErrorIs(t, b.Close(f.Ctx), device.ErrClosed, "a second free is refused")
		requireStreamUsable(t, f, s)
	})
}

// TestFreeBehindBusyWorkWaitsForIt: a free queued while work on the stream is still running
// (a host function held open) leaves the memory in place until that work completes, then
// frees it.
func TestFreeBehindBusyWorkWaitsForIt(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		before := memFree(t, f.Ctx, f.Dev)
		b, err := alloc.Malloc[uint32](f.Ctx, s, 1<<18)
		require.NoError(t, err)
		allocated := memFree(t, f.Ctx, f.Dev)
		require.Less(t, allocated, before)

		gate := make(chan struct{})
		memset := s.Memset(f.Ctx, b, 1)
		held := s.HostFunc(f.Ctx, func() { <-gate })
		freed := b.CloseOn(f.Ctx, nil)
		// The free's message has run once MemInfo's has: the memory must still be there.
		assert.Equal(t, allocated, memFree(t, f.Ctx, f.Dev), "freed while work queued before the free still runs")
		assert.False(t, freed.Ready(), "the free completed before the work ahead of it")

		close(gate)
		require.NoError(t, actorWaitAll(f.Ctx, memset, held, freed))
		assert.Equal(t, before, memFree(t, f.Ctx, f.Dev))
		requireStreamUsable(t, f, s)
	})
}

// TestDeviceBufferCloseAfterItsLastUseTakesNoWatermark: a MallocBytes buffer's Close, which
// waits for every stream of the device, needs no watermark when they have all drained; one
// stream still busy holds the free back.
func TestDeviceBufferCloseAfterItsLastUseTakesNoWatermark(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s, other := f.Stream(t), f.Stream(t)
		before := memFree(t, f.Ctx, f.Dev)
		b, err := f.Dev.MallocBytes(f.Ctx, 1<<20)
		require.NoError(t, err)
		require.NoError(t, s.Memset(f.Ctx, b, 3).Wait(f.Ctx))
		marks := f.Dev.Stats().Tracker.Watermarks
		require.NoError(t, b.Close(f.Ctx))
		assert.Equal(t, marks, f.Dev.Stats().Tracker.Watermarks)
		assert.Equal(t, before, memFree(t, f.Ctx, f.Dev))

		// Busy on another stream: Close waits for it.
		b, err = f.Dev.MallocBytes(f.Ctx, 1<<20)
		require.NoError(t, err)
		allocated := memFree(t, f.Ctx, f.Dev)
		gate := make(chan struct{})
		held := other.HostFunc(f.Ctx, func() { <-gate })
		closed := make(chan error, 1)
		go func() { closed <- b.Close(f.Ctx) }()
		require.Eventually(t, b.Closed, 10*time.Second, time.Millisecond, "the free's message runs")
		assert.Equal(t, allocated, memFree(t, f.Ctx, f.Dev), "freed while another stream still runs")
		close(gate)
		require.NoError(t, <-closed)
		require.NoError(t, held.Wait(f.Ctx))
		assert.Equal(t, before, memFree(t, f.Ctx, f.Dev))
	})
}

// TestFreesRacingWorkOnOtherStreams: goroutines each allocate, use, await and free buffers
// while others keep their streams busy; every buffer is freed once, and the memory all comes
// back (run with -race).
func TestFreesRacingWorkOnOtherStreams(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		before := memFree(t, f.Ctx, f.Dev)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := range 8 {
			s := f.Stream(t)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 20 {
					b, err := alloc.Malloc[uint32](f.Ctx, s, 1024)
					if err != nil {
						errs <- err
						return
					}
					use := s.Memset(f.Ctx, b, byte(i))
					if g%2 == 0 {
						if err := use.Wait(f.Ctx); err != nil { // drained when the free runs
							errs <- err
							return
						}
					}
					if _, err := b.CloseOn(f.Ctx, nil).Await(f.Ctx); err != nil {
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
		assert.Equal(t, before, memFree(t, f.Ctx, f.Dev))
	})
}

func actorWaitAll(ctx context.Context, fs ...*streams.Future) error {
	for _, f := range fs {
		if err := f.Wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

// TestFreeAfterAWaiterCompletedItsLastUseTakesNoWatermark: with waiter queries on, a caller's
// Await may complete the last use's future before the tracker has seen its watermark pass;
// the frees that follow (device.Buffer.Close over every stream, alloc.Buffer.CloseOn on its
// own) still find the stream drained, rather than waiting behind that watermark for a new one.
func TestFreeAfterAWaiterCompletedItsLastUseTakesNoWatermark(t *testing.T) {
	tuning := device.WithActorTuning(device.ActorTuning{WaiterQuery: device.WaiterQueryOn, AwaitSpin: time.Second})
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		for _, typed := range []bool{false, true} {
			var free func() error
			var use device.Mem
			if typed {
				b, err := alloc.Malloc[uint32](f.Ctx, s, 1024)
				require.NoError(t, err)
				use, free = b, func() error { return b.CloseOn(f.Ctx, nil).Wait(f.Ctx) }
			} else {
				b, err := f.Dev.MallocBytes(f.Ctx, 4096)
				require.NoError(t, err)
				use, free = b, func() error { return b.Close(f.Ctx) }
			}
			// Uses until a waiter completes one first; the scenario is up to the scheduler.
			first := false
			for range 200 {
				before := f.Dev.Stats().Tracker.WaiterCompleted
				require.NoError(t, s.Memset(f.Ctx, use, 1).Wait(f.Ctx))
				if first = f.Dev.Stats().Tracker.WaiterCompleted > before; first {
					break
				}
			}
			if !first {
				require.NoError(t, free())
				t.Skip("no waiter completed a use before the tracker did")
			}
			marks := f.Dev.Stats().Tracker.Watermarks
			require.NoError(t, free())
			assert.Equal(t, marks, f.Dev.Stats().Tracker.Watermarks, "typed %v: a drained stream needs no watermark", typed)
		}
	}, tuning)
}
