package core

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
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/sim"
)

// probeBackend is the simulator with a device that checks the watermark pins: no event is
// recorded again or destroyed while a waiter's query of it runs. actorBlind makes the actor's
// own queries answer "not ready" until the test lifts it, so that only waiters can complete a
// future; noAnyThread hides the any-thread query, as an isolated device's backend does.
type probeBackend struct {
	backend.Backend
	actorBlind  atomic.Bool
	noAnyThread bool

	mu         sync.Mutex
	asking     map[backend.Event]int // queries of each event in progress on waiters' threads
	violations []string
}

func (b *probeBackend) Open(ordinal int) (backend.Device, error) {
	d, err := b.Backend.Open(ordinal)
	if err != nil {
		return nil, err
	}
	pd := &probeDevice{Device: d, b: b}
	if b.noAnyThread {
		return pd, nil
	}
	return &anyThreadDevice{pd}, nil
}

func (b *probeBackend) check(op string, e backend.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.asking[e] > 0 {
		b.violations = append(b.violations, op+" of an event a waiter was asking")
	}
}

func (b *probeBackend) problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.violations...)
}

type probeDevice struct {
	backend.Device
	b *probeBackend
}

func (d *probeDevice) EventQuery(e backend.Event) error {
	if d.b.actorBlind.Load() {
		return cudaerr.Code(cudaerr.NotReady)
	}
	return d.Device.EventQuery(e)
}

func (d *probeDevice) EventRecord(e backend.Event, s backend.Stream) error {
	d.b.check("a record", e)
	return d.Device.EventRecord(e, s)
}

func (d *probeDevice) EventDestroy(e backend.Event) error {
	d.b.check("the destruction", e)
	return d.Device.EventDestroy(e)
}

type anyThreadDevice struct{ *probeDevice }

// EventQueryAnyThread asks the simulator, yielding in the middle so that the actor has every
// chance to recycle the event while the query runs, were it not pinned.
func (d *anyThreadDevice) EventQueryAnyThread(e backend.Event) error {
	b := d.b
	b.mu.Lock()
	if b.asking == nil {
		b.asking = map[backend.Event]int{}
	}
	b.asking[e]++
	b.mu.Unlock()
	runtime.Gosched()
	err := d.Device.(backend.AnyThreadEventQuerier).EventQueryAnyThread(e)
	b.mu.Lock()
	b.asking[e]--
	b.mu.Unlock()
	return err
}

// openProbed opens a simulated device whose waiters probe (unless the backend hides the
// any-thread query), with a kernel "gate" that runs until release is closed, and enough Ps
// for waiters to get spin tokens beside the actor.
func openProbed(t *testing.T, b *probeBackend) (d *Device, gate *Kernel, release func()) {
	t.Helper()
	prev := runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), 8))
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	ctx := context.Background()
	d, err := Open(ctx, b, Config{WaiterQuery: true, Tuning: []actor.Option{actor.WithAwaitSpin(time.Minute)}}, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	ch := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(ch) }) }
	t.Cleanup(release)
	spec := backend.ModuleSpec{SimKernels: map[string]cuda.SimKernel{
		"gate":  func(*cuda.KernelCall) error { <-ch; return nil },
		"empty": func(*cuda.KernelCall) error { return nil },
		"crash": func(*cuda.KernelCall) error { panic("the kernel faulted") },
	}}
	m, err := LoadModule(ctx, d, "probe", spec, nil)
	require.NoError(t, err)
	gate, err = m.Kernel(ctx, "gate")
	require.NoError(t, err)
	return d, gate, release
}

func kernelOf(t *testing.T, d *Device, name string) *Kernel {
	t.Helper()
	ctx := context.Background()
	m, err := LoadModule(ctx, d, "probe2", backend.ModuleSpec{SimKernels: map[string]cuda.SimKernel{
		"empty": func(*cuda.KernelCall) error { return nil },
		"crash": func(*cuda.KernelCall) error { panic("the kernel faulted") },
	}}, nil)
	require.NoError(t, err)
	k, err := m.Kernel(ctx, name)
	require.NoError(t, err)
	return k
}

// Only the waiter can see the GPU pass while the actor's queries say "not ready": the future
// completes, by the waiter's query, with nil, and counts once.
func TestWaiterCompletesItsFuture(t *testing.T) {
	b := &probeBackend{Backend: sim.New()}
	d, _, _ := openProbed(t, b)
	ctx := context.Background()
	empty := kernelOf(t, d, "empty")
	b.actorBlind.Store(true)
	t.Cleanup(func() { b.actorBlind.Store(false) }) // before Close, which asks events too
	// Fewer than maxMarks: the blind actor keeps every watermark in flight.
	for range maxMarks - 1 {
		require.NoError(t, Launch(ctx, d.Stream(), empty, oneBlock, nil).Wait(ctx))
	}
	st := d.TrackerStats()
	assert.Equal(t, uint64(maxMarks-1), st.WaiterCompleted, "every future was completed by its waiter")
	assert.GreaterOrEqual(t, st.WaiterQueries, uint64(maxMarks-1))
	assert.Zero(t, st.Completed, "none by the actor")
	b.actorBlind.Store(false)
	require.NoError(t, d.Synchronize(ctx))
	ops := d.OpStats()
	assert.Zero(t, ops.InFlight, "each operation completed once")
	assert.Zero(t, ops.Failed)
	assert.Empty(t, b.problems())
}

// Many waiters on many futures that share watermarks, the actor racing them: every future
// completes once, with nil, and no event is recycled while a waiter asks it.
func TestWaitersAndActorRace(t *testing.T) {
	b := &probeBackend{Backend: sim.New()}
	d, gate, release := openProbed(t, b)
	ctx := context.Background()
	s, err := NewStream(ctx, d, StreamConfig{})
	require.NoError(t, err)
	empty := kernelOf(t, d, "empty")
	for round := range 5 {
		futs := []*Future{Launch(ctx, s, gate, oneBlock, nil)}
		for range 40 {
			futs = append(futs, Launch(ctx, s, empty, oneBlock, nil))
		}
		var wg sync.WaitGroup
		errs := make(chan error, 4*len(futs))
		for _, f := range futs {
			for range 4 {
				wg.Go(func() { errs <- f.Wait(ctx) })
			}
		}
		if round == 0 {
			release()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
	}
	require.NoError(t, d.Synchronize(ctx))
	ops := d.OpStats()
	assert.Zero(t, ops.InFlight, "each operation completed once")
	assert.Zero(t, ops.Failed)
	assert.Empty(t, b.problems())
}

// Close while waiters spin on futures the GPU has not passed: Close waits for the GPU, every
// waiter returns, and no event is destroyed while a waiter asks it.
func TestCloseWhileWaitersProbe(t *testing.T) {
	b := &probeBackend{Backend: sim.New()}
	d, gate, release := openProbed(t, b)
	ctx := context.Background()
	empty := kernelOf(t, d, "empty")
	futs := []*Future{Launch(ctx, d.Stream(), gate, oneBlock, nil)}
	for range 30 {
		futs = append(futs, Launch(ctx, d.Stream(), empty, oneBlock, nil))
	}
	var wg sync.WaitGroup
	for _, f := range futs {
		for range 2 {
			wg.Go(func() { assert.NoError(t, f.Wait(ctx)) })
		}
	}
	closed := make(chan error, 1)
	go func() { closed <- d.Close() }()
	release()
	require.NoError(t, <-closed)
	wg.Wait()
	assert.Zero(t, d.OpStats().InFlight)
	assert.Empty(t, b.problems())
}

// A kernel's fault seen by a waiter's query is left to the actor, which reports it as the
// device's failure, naming the kernel, once; the waiter never completes a future with it.
func TestFaultWhileWaitersProbe(t *testing.T) {
	b := &probeBackend{Backend: sim.New()}
	d, gate, release := openProbed(t, b)
	ctx := context.Background()
	crash := kernelOf(t, d, "crash")
	first := Launch(ctx, d.Stream(), gate, oneBlock, nil)
	faulted := Launch(ctx, d.Stream(), crash, oneBlock, nil)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = faulted.Wait(ctx) })
	}
	release()
	wg.Wait()
	if err := first.Wait(ctx); err != nil { // it shares the faulted launch's watermark, or not
		require.ErrorIs(t, err, ErrDeviceFailed)
	}
	for _, err := range errs {
		require.ErrorIs(t, err, ErrDeviceFailed, "the actor's report, not the waiter's raw query")
		assert.ErrorContains(t, err, "crash")
	}
	assert.Equal(t, errs[0], faulted.Err(), "one result for every waiter")
	assert.Empty(t, b.problems())
}

// A backend that cannot be asked from any thread (an isolated device's) is never probed: the
// actor completes everything, as without the option.
func TestNoProbeWithoutAnyThreadQuery(t *testing.T) {
	b := &probeBackend{Backend: sim.New(), noAnyThread: true}
	d, _, _ := openProbed(t, b)
	ctx := context.Background()
	empty := kernelOf(t, d, "empty")
	for range 10 {
		require.NoError(t, Launch(ctx, d.Stream(), empty, oneBlock, nil).Wait(ctx))
	}
	st := d.TrackerStats()
	assert.Zero(t, st.WaiterQueries)
	assert.Zero(t, st.WaiterCompleted)
}

// A waiter whose context ends while it probes returns the context's error; the operation still
// completes.
func TestProbingWaiterCancelled(t *testing.T) {
	b := &probeBackend{Backend: sim.New()}
	d, gate, release := openProbed(t, b)
	ctx := context.Background()
	f := Launch(ctx, d.Stream(), gate, oneBlock, nil)
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- f.Wait(cctx) }()
	for d.TrackerStats().WaiterQueries == 0 { // the waiter has begun asking
		runtime.Gosched()
	}
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	release()
	require.NoError(t, f.Wait(ctx))
	assert.Empty(t, b.problems())
}
