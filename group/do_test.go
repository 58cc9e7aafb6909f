package group_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/streams"
)

// Do from many goroutines: every job runs once, never more at a time than the group has
// streams, and the group's counts add up.
func TestDoFromManyGoroutines(t *testing.T) {
	ctx := context.Background()
	devs := openSims(t, 4)
	g := newGroup(t, devs, group.WithStreams(2))
	var running, peak, ran atomic.Int64
	var wg sync.WaitGroup
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, g.Do(ctx, func(ctx context.Context, d *device.Device, s *streams.Stream) error {
				n := running.Add(1)
				defer running.Add(-1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				ran.Add(1)
				return s.HostFunc(ctx, func() {}).Wait(ctx)
			}))
		}()
	}
	wg.Wait()
	assert.Equal(t, int64(200), ran.Load())
	assert.LessOrEqual(t, peak.Load(), int64(8), "at most one job per stream")
	var done uint64
	for _, st := range g.Stats().Devices {
		done += st.Done
		assert.Zero(t, st.Running)
		assert.Zero(t, st.Queued)
	}
	assert.Equal(t, uint64(200), done)
}

func TestDoBadInputAndEnds(t *testing.T) {
	ctx := context.Background()
	devs := openSims(t, 1)
	g, err := group.New(ctx, devs, group.WithStreams(1), group.WithMemory(0, 100))
	require.NoError(t, err)
	require.ErrorIs(t, g.Do(ctx, nil), device.ErrInvalidArgument)
	require.ErrorIs(t, g.Do(ctx, hostJob(func(*device.Device) {}), group.Bytes(101)), group.ErrTooBig)
	var pe *actor.PanicError
	require.ErrorAs(t, g.Do(ctx, func(context.Context, *device.Device, *streams.Stream) error { panic("boom") }), &pe)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	ran := false
	require.ErrorIs(t, g.Do(cctx, hostJob(func(*device.Device) { ran = true })), context.Canceled)
	assert.False(t, ran)

	// The one stream busy: Do queues, and runs once the stream is free.
	gt := newGate()
	busy := g.Submit(ctx, gt.job)
	<-gt.started
	done := make(chan error, 1)
	go func() { done <- g.Do(ctx, hostJob(func(*device.Device) {})) }()
	require.Eventually(t, func() bool { return g.Stats().Waiting == 1 }, time.Minute, time.Millisecond)
	close(gt.release)
	require.NoError(t, busy.Wait(ctx))
	require.NoError(t, <-done)

	require.NoError(t, g.Close(context.Background()))
	require.ErrorIs(t, g.Do(ctx, hostJob(func(*device.Device) {})), device.ErrClosed)
}

// A device failing under a job run by Do: an idempotent job runs again on the other device
// and Do returns nil; another fails naming the device.
func TestDoOnAFailingDevice(t *testing.T) {
	ctx := context.Background()
	for _, idempotent := range []bool{true, false} {
		devs := openSims(t, 2)
		oob, oobBuf := oobKernel(t, devs[0])
		g := newGroup(t, devs, group.WithPolicy(group.Memory), group.WithMemory(0, 1000), group.WithMemory(1, 500))
		var on []int
		opts := []group.JobOption{group.Bytes(10)}
		if idempotent {
			opts = append(opts, group.Idempotent())
		}
		err := g.Do(ctx, func(ctx context.Context, d *device.Device, s *streams.Stream) error {
			on = append(on, d.Ordinal())
			if d.Ordinal() == 0 {
				return s.Launch(ctx, oob, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}, oobBuf, int32(4)).Wait(ctx)
			}
			return nil
		}, opts...)
		if idempotent {
			require.NoError(t, err)
			assert.Equal(t, []int{0, 1}, on)
		} else {
			require.ErrorIs(t, err, device.ErrDeviceFailed)
			require.ErrorContains(t, err, "device 0")
			assert.Equal(t, []int{0}, on)
		}
		st := g.Stats().Devices
		assert.False(t, st[0].Healthy)
		if idempotent {
			assert.Equal(t, [2]uint64{0, 1}, [2]uint64{st[0].Failed, st[1].Done}, "one job, done on device 1")
			assert.Equal(t, uint64(1), st[0].Retries, "its first run, on device 0")
		} else {
			assert.Equal(t, [2]uint64{1, 0}, [2]uint64{st[0].Failed, st[1].Done}, "one job, failed on device 0")
			assert.Zero(t, st[0].Retries)
		}
	}
}
