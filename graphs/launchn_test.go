package graphs_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// incrementer instantiates a graph of one kernel node that adds 1 to every element of a new
// n-element buffer.
func (f *fixture) incrementer(t *testing.T) (*graphs.Exec, *device.Buffer) {
	t.Helper()
	a := f.buffer(t, n)
	g := f.graph(t)
	_, err := g.AddKernel(f.Ctx, nil, f.add, cfg(n), a, uint32(1), int32(n))
	require.NoError(t, err)
	x, err := g.Instantiate(f.Ctx)
	require.NoError(t, err)
	return x, a
}

func TestLaunchNRunsTheGraphNTimesInStreamOrder(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		x, a := f.incrementer(t)
		total := uint32(0)
		// Around the size of its messages (here 32 runs), and many of them.
		graphs.SetLaunchChunk(x, 32)
		for _, runs := range []int{1, 31, 32, 33, 64, 100, 1000} {
			_, err := x.LaunchN(f.Ctx, s, runs).Await(f.Ctx)
			require.NoError(t, err, "%d runs", runs)
			total += uint32(runs)
			assert.Equal(t, testdev.Filled(n, total), f.read(t, a), "after %d runs", runs)
		}

		// Stream order: work queued after LaunchN sees all of its runs, work before none.
		b := f.buffer(t, n)
		s.Launch(f.Ctx, f.mul, cfg(n), a, uint32(2), int32(n))
		x.LaunchN(f.Ctx, s, 70)
		last := s.Launch(f.Ctx, f.acc, cfg(n), b, a, int32(n))
		_, err := last.Await(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, testdev.Filled(n, 2*total+70), f.read(t, b))
	})
}

// LaunchN's messages interleave with other callers' operations, on the device and on the same
// stream, and every run of every caller happens.
func TestLaunchNFromManyGoroutines(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		const callers, runs = 8, 45
		type pair struct {
			s *streams.Stream
			x *graphs.Exec
			a *device.Buffer
		}
		var pairs [2]pair
		for i := range pairs {
			x, a := f.incrementer(t)
			pairs[i] = pair{f.Stream(t), x, a}
		}
		var wg sync.WaitGroup
		for i := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := pairs[i%2]
				// Half the callers replay with LaunchN, the others with single launches, on the
				// same two streams.
				if i%4 < 2 {
					_, err := p.x.LaunchN(f.Ctx, p.s, runs).Await(f.Ctx)
					assert.NoError(t, err)
					return
				}
				futs := make([]*streams.Future, 0, runs)
				for range runs {
					futs = append(futs, p.x.Launch(f.Ctx, p.s))
				}
				for _, fut := range futs {
					_, err := fut.Await(f.Ctx)
					assert.NoError(t, err)
				}
			}()
		}
		wg.Wait()
		for i, p := range pairs {
			assert.Equal(t, testdev.Filled(n, callers/2*runs), f.read(t, p.a), "stream %d: every run counted", i)
		}
	})
}

func TestLaunchNReportsAHostNodePanicOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		g := f.graph(t)
		var runs atomic.Int32
		_, err := g.AddHost(f.Ctx, nil, func() {
			if runs.Add(1) == 40 { // in the second message of 32 runs
				panic("fortieth run")
			}
		})
		require.NoError(t, err)
		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		_, err = x.LaunchN(f.Ctx, s, 100).Await(f.Ctx)
		var pe *actor.PanicError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "fortieth run", pe.Value)
		assert.Equal(t, int32(100), runs.Load(), "a panic does not stop the graph's later runs")

		_, err = x.LaunchN(f.Ctx, s, 10).Await(f.Ctx)
		require.NoError(t, err, "the panic was reported once")
		require.NoError(t, s.Synchronize(f.Ctx), "the stream goes on")
	})
}

// flakyCtx is a context whose Err reports nil for its first calls and Canceled after: a
// cancellation that lands between LaunchN's messages, at a known run.
type flakyCtx struct {
	context.Context
	calls, live atomic.Int32
}

func (c *flakyCtx) Err() error {
	if c.calls.Add(1) > c.live.Load() {
		return context.Canceled
	}
	return nil
}

func TestLaunchNStopsWhereItsContextEnds(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		x, a := f.incrementer(t)

		// Ended before the call: nothing runs.
		done, cancel := context.WithCancel(f.Ctx)
		cancel()
		_, err := x.LaunchN(done, s, 100).Await(f.Ctx)
		require.ErrorIs(t, err, context.Canceled)

		// Ended while the messages wait behind a busy actor: nothing runs either, and the
		// future fails only once the actor has dealt with every message.
		ctx, cancel := context.WithCancel(f.Ctx)
		gate := make(chan struct{})
		busy := core.Run(f.Ctx, (*core.Device)(f.Dev), func(backend.Device, *core.Tracker) (struct{}, error) {
			<-gate
			return struct{}{}, nil
		})
		fut := x.LaunchN(ctx, s, 100)
		cancel()
		close(gate)
		_, err = busy.Await(f.Ctx)
		require.NoError(t, err)
		_, err = fut.Await(f.Ctx)
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, testdev.Filled(n, 0), f.read(t, a))

		// Ended after two messages: their 64 runs happen, and the future waits for them.
		graphs.SetLaunchChunk(x, 32)
		fc := &flakyCtx{Context: f.Ctx}
		fc.live.Store(3) // LaunchN's own check, then one per message
		_, err = x.LaunchN(fc, s, 100).Await(f.Ctx)
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, testdev.Filled(n, 64), f.read(t, a))

		_, err = x.LaunchN(f.Ctx, s, 5).Await(f.Ctx)
		require.NoError(t, err, "the Exec is fine after a cancelled LaunchN")
		assert.Equal(t, testdev.Filled(n, 69), f.read(t, a))
	})
}

// LaunchN sizes its messages by what the Exec's runs cost to launch: a quarter of a
// millisecond of the actor's time each, 32 runs before it knows. Only the last message is
// tracked (one watermark callback for the whole replay), and every run happens.
func TestLaunchNSizesItsMessagesByLaunchCost(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		x, a := f.incrementer(t)
		assert.Equal(t, 32, graphs.ChunkSize(x), "before any run")
		_, err := x.LaunchN(f.Ctx, s, 40).Await(f.Ctx)
		require.NoError(t, err)
		cost := graphs.RunCost(x)
		require.Positive(t, cost)
		assert.Equal(t, int(min(max(250*time.Microsecond/cost, 1), 1024)), graphs.ChunkSize(x), "a run cost %v", cost)

		graphs.SetLaunchChunk(x, 3)
		before := f.Dev.Stats().Tracker
		_, err = x.LaunchN(f.Ctx, s, 40).Await(f.Ctx)
		require.NoError(t, err)
		after := f.Dev.Stats().Tracker
		assert.Equal(t, uint64(1), after.Completed-before.Completed, "14 messages, one tracked")
		assert.Equal(t, testdev.Filled(n, 80), f.read(t, a))
	})
}

// A run the runtime refuses ends the replay there: the runs before it ran, the error names
// it, and the device goes on. A graph whose allocation is never freed is refused from its
// second run until another graph frees it.
func TestLaunchNStopsAtARefusedRun(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		out := f.buffer(t, n)
		_, x, p := f.leaky(t, out)

		_, err := x.LaunchN(f.Ctx, s, 40).Await(f.Ctx)
		require.Error(t, err)
		assert.ErrorContains(t, err, "run 2 of 40")
		assert.Equal(t, testdev.Filled(n, 1), f.read(t, out), "only the first run ran")

		fx := f.freeing(t, p)
		f.launch(t, fx, s)
		_, err = x.LaunchN(f.Ctx, s, 1).Await(f.Ctx)
		require.NoError(t, err, "runs again once freed")
		f.launch(t, fx, s)
		assert.Equal(t, testdev.Filled(n, 2), f.read(t, out))
		require.NoError(t, x.Close(f.Ctx))
		require.NoError(t, f.Dev.Synchronize(f.Ctx), "the device is fine after the refused run")
	})
}

func TestLaunchNBadInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		x, a := f.incrementer(t)
		for _, runs := range []int{0, -1} {
			_, err := x.LaunchN(f.Ctx, s, runs).Await(f.Ctx)
			require.ErrorIs(t, err, device.ErrInvalidArgument, "%d runs", runs)
			assert.ErrorContains(t, err, "n must be at least 1")
		}
		_, err := x.LaunchN(f.Ctx, nil, 3).Await(f.Ctx)
		require.ErrorIs(t, err, device.ErrInvalidArgument, "nil stream")
		var none *graphs.Exec
		_, err = none.LaunchN(f.Ctx, s, 3).Await(f.Ctx)
		require.ErrorIs(t, err, device.ErrInvalidArgument, "nil Exec")

		gone, err := streams.New(f.Ctx, f.Dev)
		require.NoError(t, err)
		require.NoError(t, gone.Close(f.Ctx))
		_, err = x.LaunchN(f.Ctx, gone, 40).Await(f.Ctx)
		require.ErrorIs(t, err, device.ErrClosed, "a destroyed stream")

		y, b := f.incrementer(t)
		require.NoError(t, y.Close(f.Ctx))
		_, err = y.LaunchN(f.Ctx, s, 3).Await(f.Ctx)
		require.ErrorIs(t, err, device.ErrClosed, "a destroyed Exec")
		assert.Equal(t, testdev.Filled(n, 0), f.read(t, b))

		// Destroyed while its runs wait on the stream: they still run (Destroy's promise).
		z, c := f.incrementer(t)
		gate := make(chan struct{})
		s.HostFunc(f.Ctx, func() { <-gate })
		fut := z.LaunchN(f.Ctx, s, 100)
		require.NoError(t, z.Close(f.Ctx))
		close(gate)
		_, err = fut.Await(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, testdev.Filled(n, 100), f.read(t, c))

		_, err = x.LaunchN(f.Ctx, s, 3).Await(f.Ctx)
		require.NoError(t, err, "the device is fine after all that")
		assert.Equal(t, testdev.Filled(n, 3), f.read(t, a))
	})
}

// A caller awaiting a replay spins as cudaStreamSynchronize would where the host has CPUs to
// spare, unless the device's futures are set not to spin.
func TestLaunchNFutureSpinsForTheReplay(t *testing.T) {
	assert.Equal(t, 20*time.Millisecond, graphs.ReplayAwaitSpin(actor.DefaultAwaitSpin, 16))
	assert.Equal(t, 20*time.Millisecond, graphs.ReplayAwaitSpin(actor.DefaultAwaitSpin, 4))
	assert.Equal(t, actor.DefaultAwaitSpin, graphs.ReplayAwaitSpin(actor.DefaultAwaitSpin, 2), "a 2-CPU host")
	assert.Equal(t, 50*time.Millisecond, graphs.ReplayAwaitSpin(50*time.Millisecond, 16), "a longer spin is kept")
	assert.Zero(t, graphs.ReplayAwaitSpin(0, 16), "a future set not to spin")

	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		x, _ := f.incrementer(t)
		fut := x.LaunchN(f.Ctx, s, 2)
		want := graphs.ReplayAwaitSpin(actor.DefaultAwaitSpin, min(runtime.GOMAXPROCS(0), runtime.NumCPU()))
		assert.Equal(t, want, fut.AwaitSpin(), "this host's spin")
		_, err := fut.Await(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, actor.DefaultAwaitSpin, x.Launch(f.Ctx, s).AwaitSpin(), "Launch keeps the default")

		quiet := testdev.Open(t, f.Ctx, append(f.Opts, device.WithActorTuning(device.ActorTuning{AwaitSpin: device.NoSpin})))
		qs, err := streams.New(f.Ctx, quiet)
		require.NoError(t, err)
		g, err := graphs.New(f.Ctx, quiet)
		require.NoError(t, err)
		_, err = g.AddEmpty(f.Ctx, nil)
		require.NoError(t, err)
		qx, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		fut = qx.LaunchN(f.Ctx, qs, 100)
		assert.Zero(t, fut.AwaitSpin(), "a device whose futures park at once")
		_, err = fut.Await(f.Ctx)
		require.NoError(t, err)
		require.NoError(t, qx.Close(f.Ctx))
		require.NoError(t, g.Close(f.Ctx))
		require.NoError(t, qs.Close(f.Ctx))
	})
}
