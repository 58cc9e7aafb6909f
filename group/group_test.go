package group_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// openSims opens n devices of one simulator (with its options), closed with the test. A
// sticky fault stays on its device (sim.WithConfinedFaults), as with isolated devices on GPUs: the
// group's fail-over is what these tests are about. TestEveryDeviceFailingTogether has the
// in-process kind, where one fault fails them all.
func openSims(t testing.TB, n int, opts ...sim.Option) []*device.Device {
	t.Helper()
	devs, err := device.OpenAll(context.Background(),
		device.WithSimulator(sim.New(append([]sim.Option{sim.WithDevices(n), sim.WithConfinedFaults()}, opts...)...)),
		device.WithKernelCache(""),
		// Parked actors: eight spinning ones would starve a small machine.
		device.WithActorTuning(device.ActorTuning{Spin: device.NoSpin, BusySpin: device.NoSpin, AwaitSpin: device.NoSpin}))
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, d := range devs {
			_ = d.Close()
		}
	})
	return devs
}

func newGroup(t testing.TB, devs []*device.Device, opts ...group.Option) *group.Group {
	t.Helper()
	g, err := group.New(context.Background(), devs, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, g.Close(context.Background())) })
	return g
}

// hostJob is a job that runs fn on the GPU's stream order (a host function on s) and waits.
func hostJob(fn func(d *device.Device)) group.Job {
	return func(ctx context.Context, d *device.Device, s *streams.Stream) error {
		return s.HostFunc(ctx, func() { fn(d) }).Wait(ctx)
	}
}

func TestEveryJobRunsOnceOverEveryDevice(t *testing.T) {
	ctx := context.Background()
	devs := openSims(t, 8)
	g := newGroup(t, devs)
	var per [8]atomic.Int64
	var runs sync.Map
	for i := range 2000 {
		g.Go(ctx, hostJob(func(d *device.Device) {
			per[d.Ordinal()].Add(1)
			_, again := runs.LoadOrStore(i, true)
			assert.False(t, again, "job %d ran twice", i)
		}))
	}
	require.NoError(t, g.Wait())
	var total int64
	for i := range per {
		total += per[i].Load()
		assert.Positive(t, per[i].Load(), "device %d got no work", i)
	}
	assert.Equal(t, int64(2000), total)
	var done uint64
	for _, st := range g.Stats().Devices {
		done += st.Done
		assert.True(t, st.Healthy)
		assert.Zero(t, st.Queued)
		assert.Zero(t, st.Running)
		assert.Positive(t, st.MeanJob)
	}
	assert.Equal(t, uint64(2000), done)
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	_, err := group.New(ctx, nil)
	require.ErrorIs(t, err, group.ErrNoDevice)
	devs := openSims(t, 2)
	_, err = group.New(ctx, []*device.Device{devs[0], nil})
	require.ErrorIs(t, err, device.ErrInvalidArgument)
	_, err = group.New(ctx, []*device.Device{devs[0], devs[0]})
	require.ErrorIs(t, err, device.ErrInvalidArgument)
	_, err = group.New(ctx, devs, group.WithStreams(0))
	require.ErrorContains(t, err, "WithStreams(0)")
	_, err = group.New(ctx, devs, group.WithQueue(-1))
	require.ErrorContains(t, err, "WithQueue(-1)")

	g := newGroup(t, devs, group.WithMemory(0, 1<<20), group.WithMemory(1, 2<<20))
	require.ErrorIs(t, g.Submit(ctx, nil).Wait(ctx), device.ErrInvalidArgument)
	err = g.Submit(ctx, hostJob(func(*device.Device) {}), group.Bytes(3<<20)).Wait(ctx)
	require.ErrorIs(t, err, group.ErrTooBig, "at once, not a hang")

	err = g.Submit(ctx, func(context.Context, *device.Device, *streams.Stream) error { panic("boom") }).Wait(ctx)
	var pe *actor.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "boom", pe.Value)
	require.NoError(t, g.Submit(ctx, hostJob(func(*device.Device) {})).Wait(ctx), "the group goes on")
}

// gate is a job that holds its stream until released.
type gate struct {
	started chan struct{}
	release chan struct{}
}

func newGate() *gate { return &gate{started: make(chan struct{}, 64), release: make(chan struct{})} }

func (g *gate) job(ctx context.Context, _ *device.Device, _ *streams.Stream) error {
	g.started <- struct{}{}
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func TestQueueBound(t *testing.T) {
	ctx := context.Background()
	devs := openSims(t, 1)
	for _, failFast := range []bool{false, true} {
		t.Run(fmt.Sprint("failfast=", failFast), func(t *testing.T) {
			opts := []group.Option{group.WithStreams(1), group.WithQueue(2)}
			if failFast {
				opts = append(opts, group.WithFailFast())
			}
			g := newGroup(t, devs, opts...)
			gt := newGate()
			running := g.Submit(ctx, gt.job)
			<-gt.started
			queued := []actor.Waiter{g.Submit(ctx, gt.job), g.Submit(ctx, gt.job)}
			tctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			defer cancel()
			err := g.Submit(tctx, gt.job).Wait(ctx)
			if failFast {
				require.ErrorIs(t, err, group.ErrQueueFull)
			} else {
				require.ErrorIs(t, err, context.DeadlineExceeded, "waited for room within its ctx")
			}
			close(gt.release)
			require.NoError(t, actor.WaitAll(ctx, append(queued, running)...))
		})
	}
}

func TestCancellation(t *testing.T) {
	ctx := context.Background()
	devs := openSims(t, 1)
	g := newGroup(t, devs, group.WithStreams(1))
	gt := newGate()
	running := g.Submit(ctx, gt.job)
	<-gt.started

	qctx, cancelQueued := context.WithCancel(ctx)
	ran := atomic.Bool{}
	queued := g.Submit(qctx, hostJob(func(*device.Device) { ran.Store(true) }))
	require.Eventually(t, func() bool { return g.Stats().Waiting == 1 }, time.Minute, time.Millisecond)
	cancelQueued()
	select {
	case <-queued.Done():
	case <-time.After(time.Second):
		t.Fatal("a job cancelled in the queue did not leave it at once")
	}
	require.ErrorIs(t, queued.Wait(ctx), context.Canceled)
	assert.Zero(t, g.Stats().Waiting)

	rctx, cancelRunning := context.WithCancel(ctx)
	close(gt.release)
	require.NoError(t, running.Wait(ctx))
	gt2 := newGate()
	second := g.Submit(rctx, gt2.job)
	<-gt2.started
	cancelRunning()
	require.ErrorIs(t, second.Wait(ctx), context.Canceled, "a running job sees its ctx end")
	assert.False(t, ran.Load(), "the cancelled queued job never ran")
}

func TestCloseFailsQueuedJobs(t *testing.T) {
	ctx := context.Background()
	devs := openSims(t, 1)
	g, err := group.New(ctx, devs, group.WithStreams(1))
	require.NoError(t, err)
	gt := newGate()
	running := g.Submit(ctx, gt.job)
	<-gt.started
	queued := g.Submit(ctx, gt.job)
	closed := make(chan error, 1)
	go func() { closed <- g.Close(context.Background()) }()
	require.ErrorIs(t, queued.Wait(ctx), device.ErrClosed)
	select {
	case <-closed:
		t.Fatal("Close returned while a job ran")
	case <-time.After(10 * time.Millisecond):
	}
	close(gt.release)
	require.NoError(t, running.Wait(ctx))
	require.NoError(t, <-closed)
	require.ErrorIs(t, g.Submit(ctx, gt.job).Wait(ctx), device.ErrClosed)
	require.NoError(t, g.Close(context.Background()), "twice")
}

func TestPolicies(t *testing.T) {
	ctx := context.Background()
	t.Run("round robin", func(t *testing.T) {
		devs := openSims(t, 4)
		g := newGroup(t, devs, group.WithPolicy(group.RoundRobin))
		var per [4]atomic.Int64
		for range 400 {
			g.Go(ctx, hostJob(func(d *device.Device) { per[d.Ordinal()].Add(1) }))
		}
		require.NoError(t, g.Wait())
		for i := range per {
			assert.Equal(t, int64(100), per[i].Load())
		}
	})
	t.Run("affinity", func(t *testing.T) {
		devs := openSims(t, 4)
		g := newGroup(t, devs, group.WithPolicy(group.Affinity))
		var mu sync.Mutex
		where := map[string]map[int]bool{}
		for i := range 200 {
			key := fmt.Sprint("k", i%7)
			g.Go(ctx, hostJob(func(d *device.Device) {
				mu.Lock()
				defer mu.Unlock()
				if where[key] == nil {
					where[key] = map[int]bool{}
				}
				where[key][d.Ordinal()] = true
			}), group.Key(key))
		}
		require.NoError(t, g.Wait())
		devices := map[int]bool{}
		for key, on := range where {
			assert.Len(t, on, 1, "key %s ran on %v", key, on)
			for d := range on {
				devices[d] = true
			}
		}
		assert.Greater(t, len(devices), 1, "keys spread over devices")
	})
	t.Run("memory", func(t *testing.T) {
		devs := openSims(t, 2)
		g := newGroup(t, devs, group.WithPolicy(group.Memory), group.WithMemory(0, 100), group.WithMemory(1, 300))
		var on atomic.Int64
		on.Store(-1)
		require.NoError(t, g.Submit(ctx, hostJob(func(d *device.Device) { on.Store(int64(d.Ordinal())) }), group.Bytes(200)).Wait(ctx))
		assert.Equal(t, int64(1), on.Load(), "only device 1 has room for 200 bytes")

		// Two jobs of 200 bytes: the second waits on device 1 until the first is done.
		gt := newGate()
		first := g.Submit(ctx, gt.job, group.Bytes(200))
		<-gt.started
		second := g.Submit(ctx, gt.job, group.Bytes(200))
		select {
		case <-gt.started:
			t.Fatal("the second job ran beside the first, past device 1's memory")
		case <-time.After(20 * time.Millisecond):
		}
		assert.Equal(t, int64(400), g.Stats().Devices[1].MemoryReserved)
		close(gt.release)
		require.NoError(t, actor.WaitAll(ctx, first, second))
		assert.Zero(t, g.Stats().Devices[1].MemoryReserved)
	})
}

// A device four times slower gets about a quarter as many jobs: least-outstanding placement
// follows the devices' speed.
func TestFasterDeviceGetsMoreWork(t *testing.T) {
	ctx := context.Background()
	devs := openSims(t, 2, sim.WithSlowdown(1, 4))
	g := newGroup(t, devs, group.WithStreams(2))
	var per [2]atomic.Int64
	for range 200 {
		g.Go(ctx, hostJob(func(d *device.Device) {
			time.Sleep(time.Millisecond)
			per[d.Ordinal()].Add(1)
		}))
	}
	require.NoError(t, g.Wait())
	fast, slow := per[0].Load(), per[1].Load()
	t.Logf("fast device %d jobs, slow device %d", fast, slow)
	assert.Greater(t, fast, 2*slow)
}

func TestMap(t *testing.T) {
	ctx := context.Background()
	devs := openSims(t, 3)
	g := newGroup(t, devs)
	items := make([]int32, 10007)
	for i := range items {
		items[i] = int32(i)
	}
	got, err := group.Map(ctx, g, items, 0, func(ctx context.Context, d *device.Device, s *streams.Stream, shard []int32) ([]int64, error) {
		out := make([]int64, len(shard))
		for i, v := range shard {
			out[i] = 2 * int64(v)
		}
		return out, s.HostFunc(ctx, func() {}).Wait(ctx)
	})
	require.NoError(t, err)
	require.Len(t, got, len(items))
	for i, v := range got {
		require.Equal(t, 2*int64(i), v)
	}
	boom := errors.New("boom")
	_, err = group.Map(ctx, g, items, 5, func(context.Context, *device.Device, *streams.Stream, []int32) ([]int64, error) {
		return nil, boom
	})
	require.ErrorIs(t, err, boom)
	_, err = group.Map[int32, int64](ctx, g, items, 1, nil)
	require.ErrorIs(t, err, device.ErrInvalidArgument)
}

// Jobs whose context ends while they wait leave as cancelled, however the workers race the
// cancellation: none runs, none counts as failed.
func TestCancelledQueuedJobsNeverRun(t *testing.T) {
	ctx := context.Background()
	devs := openSims(t, 1)
	g := newGroup(t, devs, group.WithStreams(1))
	gt := newGate()
	blocker := g.Submit(ctx, gt.job)
	<-gt.started
	qctx, cancel := context.WithCancel(ctx)
	var ran atomic.Int64
	fs := make([]actor.Waiter, 500)
	for i := range fs {
		opts := []group.JobOption{}
		if i%2 == 0 {
			opts = append(opts, group.Bytes(1024))
		}
		fs[i] = g.Submit(qctx, func(context.Context, *device.Device, *streams.Stream) error {
			ran.Add(1)
			return nil
		}, opts...)
	}
	cancel()
	close(gt.release) // the worker takes the queue while the cancellations run
	require.NoError(t, blocker.Wait(ctx))
	for _, f := range fs {
		require.ErrorIs(t, f.Wait(ctx), context.Canceled)
	}
	assert.Zero(t, ran.Load())
	st := g.Stats().Devices[0]
	assert.Zero(t, st.Failed)
	assert.Equal(t, uint64(1), st.Done)
}
