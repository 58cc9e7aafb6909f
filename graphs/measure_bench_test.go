package graphs_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testgpu"
	"github.com/gpuactor/gpuactor/streams"
)

// actorClock queues a message that reads the clock on dev's actor thread: it runs after every
// message queued before it, so its time is when the actor had done them all, whenever the
// caller gets to read it.
func actorClock(ctx context.Context, dev *device.Device) *actor.Future[time.Time] {
	return core.Run(ctx, (*core.Device)(dev), func(backend.Device, *core.Tracker) (time.Time, error) { return time.Now(), nil })
}

// wakeActor runs a no-op message on dev's actor and waits for it: afterwards the actor is
// awake, whether or not it had parked.
func wakeActor(b *testing.B, dev *device.Device) {
	_, err := core.Run(context.Background(), (*core.Device)(dev), func(backend.Device, *core.Tracker) (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
	require.NoError(b, err)
}

// bindingHandles returns the runtime and s's handle, for launching xh straight through the
// binding from a thread other than the actor's, after one launch of xh on s by the actor.
func bindingHandles(b *testing.B, s *streams.Stream, xh backend.GraphExec) (backend.Device, backend.Stream) {
	type handles struct {
		rt backend.Device
		h  backend.Stream
	}
	ctx := context.Background()
	hs, err := core.RunOn(ctx, (*core.Stream)(s), func(rt backend.Device, _ *core.Tracker, h backend.Stream) (handles, error) {
		return handles{rt, h}, rt.GraphLaunch(xh, h)
	}).Await(ctx)
	require.NoError(b, err)
	return hs.rt, hs.h
}

// replaySetup is what the one-node replay benchmarks drive: the cuda device, an Exec of one
// empty kernel and a stream, and the runtime and handles that launch it through the binding.
func replaySetup(b *testing.B) (*device.Device, *graphs.Exec, *streams.Stream, backend.Device, backend.GraphExec, backend.Stream) {
	testgpu.Need(b, testdev.GPU(), "the cuda backend sees no device")
	dev, x, s := chainBench(b, func() (*device.Device, error) {
		return device.Open(context.Background(), 0, device.WithBackend(device.BackendCUDA))
	}, 1)
	xh := graphs.HandleOf(x)
	rt, h := bindingHandles(b, s, xh)
	return dev, x, s, rt, xh, h
}

// lockedThread starts a goroutine locked to an OS thread of its own, as the bench's binding
// rows run, and returns a function that runs fn there and waits for it. The goroutine ends
// with b.
func lockedThread(b *testing.B) func(fn func()) {
	work, done := make(chan func()), make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for fn := range work {
			fn()
			done <- struct{}{}
		}
	}()
	b.Cleanup(func() { close(work) })
	return func(fn func()) {
		work <- fn
		<-done
	}
}

// gpuSpan is a pair of timing events on s: recorded before and after some work, they give the
// GPU's span of it. They are destroyed with b, before the device closes.
type gpuSpan struct {
	s  *streams.Stream
	ev [2]backend.Event
}

func newGPUSpan(b *testing.B, dev *device.Device, s *streams.Stream) *gpuSpan {
	ctx := context.Background()
	ev, err := core.Run(ctx, (*core.Device)(dev), func(rt backend.Device, _ *core.Tracker) (ev [2]backend.Event, err error) {
		if ev[0], err = rt.EventCreate(backend.EventDefault); err != nil {
			return ev, err
		}
		if ev[1], err = rt.EventCreate(backend.EventDefault); err != nil {
			return ev, errors.Join(err, rt.EventDestroy(ev[0]))
		}
		return ev, nil
	}).Await(ctx)
	require.NoError(b, err)
	b.Cleanup(func() {
		_, _ = core.Run(ctx, (*core.Device)(dev), func(rt backend.Device, _ *core.Tracker) (struct{}, error) {
			return struct{}{}, errors.Join(rt.EventDestroy(ev[0]), rt.EventDestroy(ev[1]))
		}).Await(ctx)
	})
	return &gpuSpan{s: s, ev: ev}
}

// mark queues the record of the start (0) or end (1) event on the stream; a failed record
// shows in seconds.
func (g *gpuSpan) mark(end int) {
	core.RunOn(context.Background(), (*core.Stream)(g.s), func(rt backend.Device, _ *core.Tracker, h backend.Stream) (struct{}, error) {
		return struct{}{}, rt.EventRecord(g.ev[end], h)
	})
}

// seconds waits for the end event and returns the time between the two.
func (g *gpuSpan) seconds(b *testing.B) float64 {
	ms, err := core.RunOn(context.Background(), (*core.Stream)(g.s), func(rt backend.Device, _ *core.Tracker, _ backend.Stream) (float32, error) {
		if err := rt.EventSynchronize(g.ev[1]); err != nil {
			return 0, err
		}
		return rt.EventElapsed(g.ev[0], g.ev[1])
	}).Await(context.Background())
	require.NoError(b, err)
	return float64(ms) / 1e3
}

// quantile is the q-quantile of v (the nearest rank), which it leaves as it was.
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[int(q*float64(len(v)-1)+0.5)]
}

func mean(v []float64) float64 {
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t / float64(len(v))
}
