package group_test

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
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/internal/testleak"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
	"github.com/gpuactor/gpuactor/supervise"
)

// simOptions open a device of sim with parked actors, as openSims does.
func simOptions(machine *sim.Simulator) []device.Option {
	return []device.Option{device.WithSimulator(machine), device.WithKernelCache(""),
		device.WithActorTuning(device.ActorTuning{Spin: device.NoSpin, BusySpin: device.NoSpin, AwaitSpin: device.NoSpin})}
}

// reopener stands for a device in a worker process of its own: each open gives a fresh device
// of the failed one's ordinal on a new simulator, as a restarted worker would see a fresh GPU
// (a failed in-process simulator device cannot reopen). It knows each device's simulator, so
// that a test can fail any generation.
type reopener struct {
	n      int
	memory uint64        // when not 0, the memory of each new simulator's devices
	fail   atomic.Int32  // how many of the next opens fail
	hold   chan struct{} // when not nil, open waits for it (or its ctx) first
	calls  atomic.Int32
	mu     sync.Mutex
	sims   map[*device.Device]*sim.Simulator
	opened []*device.Device
}

var errOpen = errors.New("test: the worker did not start")

// newReopener opens n devices of one simulator, closed with the test.
func newReopener(t *testing.T, n int, opts ...sim.Option) (*reopener, []*device.Device) {
	t.Helper()
	r := &reopener{n: n, sims: map[*device.Device]*sim.Simulator{}}
	// Each device fails alone, as isolated devices do on GPUs, which restarts are for.
	machine := sim.New(append([]sim.Option{sim.WithDevices(n), sim.WithConfinedFaults()}, opts...)...)
	var devs []*device.Device
	for i := range n {
		d, err := device.Open(context.Background(), i, simOptions(machine)...)
		require.NoError(t, err)
		r.sims[d] = machine
		devs = append(devs, d)
	}
	t.Cleanup(func() {
		for _, d := range devs {
			_ = d.Close()
		}
	})
	return r, devs
}

func (r *reopener) open(ctx context.Context, failed *device.Device) (*device.Device, error) {
	r.calls.Add(1)
	if r.hold != nil {
		select {
		case <-r.hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if r.fail.Add(-1) >= 0 {
		return nil, errOpen
	}
	opts := []sim.Option{sim.WithDevices(r.n), sim.WithConfinedFaults()}
	if r.memory != 0 {
		opts = append(opts, sim.WithMemory(r.memory))
	}
	machine := sim.New(opts...)
	d, err := device.Open(ctx, failed.Ordinal(), simOptions(machine)...)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sims[d] = machine
	r.opened = append(r.opened, d)
	return d, nil
}

// failNow faults d on its simulator and makes it learn of the fault at once, as a job on it
// would: the group's check then sees it failed.
func (r *reopener) failNow(t *testing.T, d *device.Device) {
	t.Helper()
	r.mu.Lock()
	machine := r.sims[d]
	r.mu.Unlock()
	require.NoError(t, machine.Fail(d.Ordinal(), cudaerr.LaunchFailure))
	require.ErrorIs(t, d.Health(context.Background()), device.ErrDeviceFailed)
}

func (r *reopener) openedDevices() []*device.Device {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*device.Device(nil), r.opened...)
}

// fast is a restart policy for tests: no backoff to speak of, checked every millisecond.
func fast(more ...supervise.Option) []supervise.Option {
	return append([]supervise.Option{supervise.WithBackoff(time.Millisecond), supervise.WithCheckEvery(time.Millisecond)}, more...)
}

// restartedAt waits until member i of g has restarted n times and is healthy again.
func restartedAt(t *testing.T, g *group.Group, i int, n uint64) {
	t.Helper()
	require.Eventually(t, func() bool {
		st := g.Stats().Devices[i]
		return st.Restarts == n && st.Healthy
	}, 5*time.Second, time.Millisecond, "device %d restarted %d times", i, n)
}

// runOnEach runs jobs round robin until each device has run at least per of them, and returns
// how many ran on each ordinal.
func runJobs(t *testing.T, g *group.Group, n int) map[*device.Device]int {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	ran := map[*device.Device]int{}
	for range n {
		g.Go(ctx, hostJob(func(d *device.Device) {
			mu.Lock()
			ran[d]++
			mu.Unlock()
		}))
	}
	require.NoError(t, g.Wait())
	return ran
}

func TestRestartBringsAFailedDeviceBack(t *testing.T) {
	ctx := context.Background()
	r, devs := newReopener(t, 3)
	var restarted atomic.Int32
	g, err := group.New(ctx, devs, group.WithPolicy(group.RoundRobin),
		group.WithRestart(r.open, fast(supervise.OnRestart(func(int) { restarted.Add(1) }))...))
	require.NoError(t, err)

	ran := runJobs(t, g, 300)
	for _, d := range devs {
		assert.Equal(t, 100, ran[d], "round robin over %v", d)
	}
	before := g.Stats().Devices[1]
	require.Equal(t, uint64(100), before.Done)

	r.failNow(t, devs[1]) // idle: no job is there to find the failure
	restartedAt(t, g, 1, 1)
	assert.Equal(t, int32(1), restarted.Load(), "OnRestart")
	now := g.Devices()
	require.Len(t, now, 3)
	assert.Same(t, devs[0], now[0])
	assert.Same(t, devs[2], now[2])
	require.NotSame(t, devs[1], now[1], "a new device in the failed one's place")
	assert.Equal(t, 1, now[1].Ordinal())
	require.Equal(t, []*device.Device{now[1]}, r.openedDevices())
	_, err = devs[1].MallocBytes(ctx, 16)
	require.ErrorIs(t, err, device.ErrClosed, "the group closed the failed device")
	require.NoError(t, devs[1].Close(), "the caller's Close of it stays harmless")

	ran = runJobs(t, g, 300)
	assert.Equal(t, 100, ran[now[1]], "the restarted device takes its share again")
	assert.Zero(t, ran[devs[1]], "nothing ran on the failed device")
	st := g.Stats()
	assert.Equal(t, before.Done+100, st.Devices[1].Done, "its counts go on")
	assert.Equal(t, uint64(1), st.Devices[1].Restarts)
	assert.Zero(t, st.Devices[0].Restarts)
	assert.True(t, st.Devices[1].Healthy)
	assert.Positive(t, st.Devices[1].MemoryBytes, "memory read from the new device")

	require.NoError(t, g.Close(context.Background()))
	_, err = now[1].MallocBytes(ctx, 16)
	require.ErrorIs(t, err, device.ErrClosed, "Close closed the device the group opened")
	for _, i := range []int{0, 2} {
		b, err := devs[i].MallocBytes(ctx, 16)
		require.NoError(t, err, "the caller's healthy device %d stays open", i)
		require.NoError(t, b.Close(ctx))
	}
}

// A job that finds the failure leaves the device; the restart follows, and the jobs that
// came after completed on the other devices meanwhile.
func TestRestartAfterAJobMeetsTheFailure(t *testing.T) {
	ctx := context.Background()
	r, devs := newReopener(t, 2)
	g := newGroup(t, devs, group.WithRestart(r.open, fast()...))
	r.mu.Lock()
	machine := r.sims[devs[0]]
	r.mu.Unlock()
	require.NoError(t, machine.Fail(0, cudaerr.LaunchFailure))
	for range 200 {
		g.Go(ctx, hostJob(func(*device.Device) {}), group.Idempotent())
	}
	require.NoError(t, g.Wait(), "idempotent jobs run again where the device failed under them")
	restartedAt(t, g, 0, 1)
	ran := runJobs(t, g, 400)
	assert.Positive(t, ran[g.Devices()[0]], "the restarted device takes shared work")
}

func TestRestartsSpentLeaveTheDeviceFailed(t *testing.T) {
	ctx := context.Background()
	r, devs := newReopener(t, 3)
	gaveUp := make(chan error, 1)
	g := newGroup(t, devs, group.WithRestart(r.open,
		fast(supervise.WithRestarts(1, time.Minute), supervise.OnGiveUp(func(err error) { gaveUp <- err }))...))

	r.failNow(t, devs[1])
	restartedAt(t, g, 1, 1)
	second := g.Devices()[1]
	r.failNow(t, second)
	select {
	case err := <-gaveUp:
		require.ErrorIs(t, err, device.ErrDeviceFailed)
	case <-time.After(5 * time.Second):
		t.Fatal("the group did not give up")
	}
	require.Eventually(t, func() bool { return !g.Stats().Devices[1].Healthy }, 5*time.Second, time.Millisecond)
	assert.Equal(t, int32(1), r.calls.Load(), "one restart allowed")

	ran := runJobs(t, g, 200)
	assert.Zero(t, ran[second], "no job on the failed device")
	assert.Equal(t, 200, ran[devs[0]]+ran[devs[2]])
	st := g.Stats().Devices[1]
	assert.False(t, st.Healthy)
	assert.Equal(t, uint64(1), st.Restarts)
	assert.Same(t, second, g.Devices()[1], "the last device stays in its place, failed")
	_, err := second.MallocBytes(ctx, 16)
	require.ErrorIs(t, err, device.ErrClosed, "the failed device was closed")
}

func TestRestartOpenErrorCountsAsAFailedRestart(t *testing.T) {
	r, devs := newReopener(t, 2)
	var mu sync.Mutex
	var failures []error
	r.fail.Store(2)
	g := newGroup(t, devs, group.WithRestart(r.open, fast(supervise.WithRestarts(3, time.Minute),
		supervise.OnFailure(func(_ int, err error) { mu.Lock(); failures = append(failures, err); mu.Unlock() }))...))
	r.failNow(t, devs[0])
	restartedAt(t, g, 0, 1)
	assert.Equal(t, int32(3), r.calls.Load(), "two failed opens, then one that worked")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, failures, 3, "the device's failure, then the two opens'")
	assert.ErrorIs(t, failures[0], device.ErrDeviceFailed)
	for _, err := range failures[1:] {
		assert.ErrorIs(t, err, errOpen)
		assert.ErrorContains(t, err, "reopening device 0")
	}
}

func TestRestartOpenAlwaysFailingGivesUp(t *testing.T) {
	ctx := context.Background()
	r, devs := newReopener(t, 2)
	r.fail.Store(1 << 20)
	gaveUp := make(chan error, 1)
	g := newGroup(t, devs, group.WithRestart(r.open,
		fast(supervise.WithRestarts(2, time.Minute), supervise.OnGiveUp(func(err error) { gaveUp <- err }))...))
	r.failNow(t, devs[0])
	select {
	case err := <-gaveUp:
		require.ErrorIs(t, err, errOpen)
	case <-time.After(5 * time.Second):
		t.Fatal("the group did not give up")
	}
	assert.Equal(t, int32(2), r.calls.Load())
	require.NoError(t, g.Do(ctx, hostJob(func(d *device.Device) { assert.Same(t, devs[1], d) })))
	st := g.Stats().Devices[0]
	assert.False(t, st.Healthy)
	assert.Zero(t, st.Restarts)
}

// While the only device restarts, a job waits for it instead of failing with ErrNoDevice.
func TestRestartJobsWaitForTheOnlyDevice(t *testing.T) {
	ctx := context.Background()
	r, devs := newReopener(t, 1)
	r.hold = make(chan struct{})
	g := newGroup(t, devs, group.WithRestart(r.open, fast()...))
	r.failNow(t, devs[0])
	require.Eventually(t, func() bool { return r.calls.Load() == 1 }, 5*time.Second, time.Millisecond)
	var on atomic.Pointer[device.Device]
	f := g.Submit(ctx, hostJob(func(d *device.Device) { on.Store(d) }))
	do := make(chan error, 1)
	go func() { do <- g.Do(ctx, hostJob(func(*device.Device) {})) }()
	select {
	case <-f.Done():
		t.Fatalf("the job ended while the device restarted: %v", f.Wait(ctx))
	case err := <-do:
		t.Fatalf("Do returned while the device restarted: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(r.hold)
	require.NoError(t, f.Wait(ctx))
	require.NoError(t, <-do)
	assert.Same(t, g.Devices()[0], on.Load())
	assert.NotSame(t, devs[0], on.Load())
}

// The jobs waiting for the only device fail with ErrNoDevice once its restarts are spent.
func TestRestartGivingUpFailsTheWaitingJobs(t *testing.T) {
	ctx := context.Background()
	r, devs := newReopener(t, 1)
	r.hold = make(chan struct{})
	r.fail.Store(1)
	g := newGroup(t, devs, group.WithRestart(r.open, fast(supervise.WithRestarts(1, time.Minute))...))
	r.failNow(t, devs[0])
	require.Eventually(t, func() bool { return r.calls.Load() == 1 }, 5*time.Second, time.Millisecond)
	f := g.Submit(ctx, hostJob(func(*device.Device) {}))
	close(r.hold)
	require.ErrorIs(t, f.Wait(ctx), group.ErrNoDevice)
	require.ErrorIs(t, g.Submit(ctx, hostJob(func(*device.Device) {})).Wait(ctx), group.ErrNoDevice)
}

// Close cancels a restart under way: an open that waits on its context returns, Close returns
// soon, and nothing is left running.
func TestCloseDuringARestart(t *testing.T) {
	ctx := context.Background()
	r, devs := newReopener(t, 2)
	r.hold = make(chan struct{}) // never closed: open waits for its context
	base := testleak.Base()
	g, err := group.New(ctx, devs, group.WithRestart(r.open, fast()...))
	require.NoError(t, err)
	r.failNow(t, devs[0])
	require.Eventually(t, func() bool { return r.calls.Load() == 1 }, 5*time.Second, time.Millisecond)
	start := time.Now()
	require.NoError(t, g.Close(context.Background()))
	assert.Less(t, time.Since(start), time.Second)
	assert.Empty(t, r.openedDevices())
	testleak.Settle(t, base)
	require.NoError(t, g.Close(context.Background()), "twice")
}

// An open that returns a device although Close cancelled it leaks nothing: the group closes
// the device.
func TestCloseDuringARestartClosesALateDevice(t *testing.T) {
	ctx := context.Background()
	r, devs := newReopener(t, 2)
	base := testleak.Base()
	entered := make(chan struct{})
	var late atomic.Pointer[device.Device]
	open := func(ctx context.Context, failed *device.Device) (*device.Device, error) {
		close(entered)
		<-ctx.Done() // ignores the cancel: opens anyway
		d, err := r.open(context.Background(), failed)
		late.Store(d)
		return d, err
	}
	g, err := group.New(ctx, devs, group.WithRestart(open, fast()...))
	require.NoError(t, err)
	r.failNow(t, devs[0])
	<-entered
	require.NoError(t, g.Close(context.Background()))
	require.NotNil(t, late.Load())
	_, err = late.Load().MallocBytes(ctx, 16)
	require.ErrorIs(t, err, device.ErrClosed, "the late device was closed")
	testleak.Settle(t, base)
}

// Close after restarts leaks no goroutine either: supervisors, watchers, the new devices'
// actors are all gone.
func TestCloseAfterRestartsLeaksNothing(t *testing.T) {
	r, devs := newReopener(t, 2)
	base := testleak.Base()
	g, err := group.New(context.Background(), devs, group.WithRestart(r.open, fast()...))
	require.NoError(t, err)
	r.failNow(t, devs[0])
	restartedAt(t, g, 0, 1)
	r.failNow(t, g.Devices()[0])
	restartedAt(t, g, 0, 2)
	runJobs(t, g, 50)
	require.NoError(t, g.Close(context.Background()))
	for _, d := range r.openedDevices() {
		_, err := d.MallocBytes(context.Background(), 16)
		require.ErrorIs(t, err, device.ErrClosed)
	}
	testleak.Settle(t, base)
}

// A device failing under jobs: the idempotent ones run again elsewhere and succeed, the
// others fail with an error naming the device; then the device comes back.
func TestRestartIdempotentJobsRunAgain(t *testing.T) {
	ctx := context.Background()
	const bad = 1
	r, devs := newReopener(t, 3)
	g := newGroup(t, devs, group.WithRestart(r.open, fast()...))
	r.mu.Lock()
	machine := r.sims[devs[bad]]
	r.mu.Unlock()

	var faulted atomic.Bool
	job := func(runs *atomic.Int32) group.Job {
		return func(ctx context.Context, d *device.Device, s *streams.Stream) error {
			runs.Add(1)
			if d == devs[bad] && faulted.CompareAndSwap(false, true) {
				require.NoError(t, machine.Fail(bad, cudaerr.LaunchFailure))
			}
			return s.HostFunc(ctx, func() {}).Wait(ctx)
		}
	}
	var idem, plain []*atomic.Int32
	var fi, fp []*actor.Future[struct{}]
	for i := 0; !faulted.Load() && i < 10000; i++ {
		a, b := new(atomic.Int32), new(atomic.Int32)
		idem, plain = append(idem, a), append(plain, b)
		fi = append(fi, g.Submit(ctx, job(a), group.Idempotent()))
		fp = append(fp, g.Submit(ctx, job(b)))
	}
	require.True(t, faulted.Load())
	reran := 0
	for i, f := range fi {
		require.NoError(t, f.Wait(ctx), "idempotent job %d", i)
		if idem[i].Load() > 1 {
			reran++
		}
	}
	failed := 0
	for i, f := range fp {
		if err := f.Wait(ctx); err != nil {
			failed++
			require.ErrorIs(t, err, device.ErrDeviceFailed)
			require.ErrorContains(t, err, fmt.Sprintf("device %d", bad))
			require.Equal(t, int32(1), plain[i].Load(), "a job that is not idempotent runs once")
		}
	}
	assert.Positive(t, reran+failed, "some job was on the device when it failed")
	restartedAt(t, g, bad, 1)
	ran := runJobs(t, g, 300)
	assert.Positive(t, ran[g.Devices()[bad]])
}

// Submit and Do from many goroutines while devices fail and come back, over and over: every
// job ends, idempotent ones succeed or fail on a failed device, the others too; the race
// detector watches the swaps. At the end every device is back and takes work.
func TestRestartUnderLoad(t *testing.T) {
	ctx := context.Background()
	const n, workers, jobs = 4, 8, 300
	r, devs := newReopener(t, n)
	g := newGroup(t, devs, group.WithQueue(64), group.WithStreams(2),
		group.WithRestart(r.open, fast(supervise.WithRestarts(1000, time.Minute))...))

	stop := make(chan struct{})
	var chaos sync.WaitGroup
	var injected atomic.Int32
	chaos.Add(1)
	go func() {
		defer chaos.Done()
		rng := rand.New(rand.NewPCG(1, 2))
		for {
			select {
			case <-stop:
				return
			case <-time.After(3 * time.Millisecond):
			}
			d := g.Devices()[rng.IntN(n)]
			r.mu.Lock()
			machine := r.sims[d]
			r.mu.Unlock()
			if d.Err() == nil && machine.Fail(d.Ordinal(), cudaerr.LaunchFailure) == nil {
				injected.Add(1)
			}
		}
	}()
	var wg sync.WaitGroup
	var ok, failed atomic.Int64
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				var opts []group.JobOption
				if i%2 == 0 {
					opts = append(opts, group.Idempotent())
				}
				fn := func(ctx context.Context, d *device.Device, s *streams.Stream) error {
					return s.HostFunc(ctx, func() {}).Wait(ctx)
				}
				var err error
				if w%2 == 0 {
					err = g.Do(ctx, fn, opts...)
				} else {
					err = g.Submit(ctx, fn, opts...).Wait(ctx)
				}
				_ = g.Stats()
				_ = g.Devices()
				if err == nil {
					ok.Add(1)
					continue
				}
				failed.Add(1)
				assert.ErrorIs(t, err, device.ErrDeviceFailed, "job %d of %d", i, w)
			}
		}()
	}
	wg.Wait()
	close(stop)
	chaos.Wait()
	t.Logf("%d ok, %d failed, %d faults injected", ok.Load(), failed.Load(), injected.Load())
	require.Equal(t, int64(workers*jobs), ok.Load()+failed.Load())
	require.Positive(t, injected.Load())

	// Every device comes back (a device failed last with no job on it is found by a check).
	for _, d := range g.Devices() {
		_ = d.Health(ctx)
	}
	require.Eventually(t, func() bool {
		for _, st := range g.Stats().Devices {
			if !st.Healthy {
				return false
			}
		}
		return true
	}, 5*time.Second, time.Millisecond)
	var restarts uint64
	for _, st := range g.Stats().Devices {
		restarts += st.Restarts
	}
	assert.Positive(t, restarts)
	ran := runJobs(t, g, 400)
	for i, d := range g.Devices() {
		assert.Positive(t, ran[d], "device %d takes work after the restarts", i)
	}
}

// The memory jobs may declare on a restarted device is the new device's.
func TestRestartRereadsTheMemory(t *testing.T) {
	ctx := context.Background()
	const small, large = 1 << 20, 4 << 20
	r, devs := newReopener(t, 2, sim.WithMemory(small))
	r.memory = large
	g := newGroup(t, devs, group.WithPolicy(group.Memory), group.WithRestart(r.open, fast()...))
	assert.Equal(t, int64(small), g.Stats().Devices[1].MemoryBytes)
	require.ErrorIs(t, g.Do(ctx, hostJob(func(*device.Device) {}), group.Bytes(3<<20)), group.ErrTooBig)

	r.failNow(t, devs[1])
	restartedAt(t, g, 1, 1)
	assert.Equal(t, int64(large), g.Stats().Devices[1].MemoryBytes)
	var on *device.Device
	require.NoError(t, g.Do(ctx, hostJob(func(d *device.Device) { on = d }), group.Bytes(3<<20)))
	assert.Same(t, g.Devices()[1], on, "the job that fits only the new device runs there")
}

// With a health check, a device that failed while idle, and has not learned of it yet, is
// found and restarted.
func TestRestartFindsAnIdleFailureByHealthCheck(t *testing.T) {
	r, devs := newReopener(t, 2)
	g := newGroup(t, devs, group.WithRestart(r.open, fast(supervise.WithHealthCheck(2*time.Millisecond, time.Second))...))
	r.mu.Lock()
	machine := r.sims[devs[1]]
	r.mu.Unlock()
	require.NoError(t, machine.Fail(1, cudaerr.IllegalAddress)) // nothing calls the device
	restartedAt(t, g, 1, 1)
	assert.NotSame(t, devs[1], g.Devices()[1])
}

func TestWithRestartBadInput(t *testing.T) {
	ctx := context.Background()
	r, devs := newReopener(t, 2)
	_, err := group.New(ctx, devs, group.WithRestart(nil))
	require.ErrorIs(t, err, device.ErrInvalidArgument)
	require.ErrorContains(t, err, "WithRestart")
	require.NoError(t, devs[0].Health(ctx), "the device stays usable")

	// An open that returns neither a device nor an error, or the failed device itself, is a
	// failed restart, not a crash.
	var mu sync.Mutex
	var failures []error
	calls := 0
	open := func(_ context.Context, failed *device.Device) (*device.Device, error) {
		calls++
		if calls == 1 {
			return nil, nil
		}
		return failed, nil
	}
	g := newGroup(t, devs, group.WithRestart(open, fast(supervise.WithRestarts(2, time.Minute),
		supervise.OnFailure(func(_ int, err error) { mu.Lock(); failures = append(failures, err); mu.Unlock() }))...))
	r.failNow(t, devs[0])
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(failures) == 3 }, 5*time.Second, time.Millisecond)
	mu.Lock()
	require.ErrorIs(t, failures[1], device.ErrInvalidArgument)
	require.ErrorContains(t, failures[1], "neither a device nor an error")
	require.ErrorIs(t, failures[2], device.ErrInvalidArgument)
	require.ErrorContains(t, failures[2], "the failed device")
	mu.Unlock()
	require.NoError(t, g.Do(ctx, hostJob(func(d *device.Device) { assert.Same(t, devs[1], d) })))
}
