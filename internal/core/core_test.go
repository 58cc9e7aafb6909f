package core

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/sim"
)

// openSim opens device 0 of a fresh simulator, closed with the test.
func openSim(t *testing.T) *Device {
	t.Helper()
	d, err := Open(context.Background(), sim.New(), Config{}, 0)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	return d
}

func TestOpenChecksItsArguments(t *testing.T) {
	ctx := context.Background()
	_, err := Open(ctx, nil, Config{}, 0)
	assert.ErrorIs(t, err, ErrInvalidArgument)
	_, err = Open(ctx, sim.New(), Config{}, 7)
	assert.ErrorIs(t, err, ErrInvalidArgument)
	assert.ErrorContains(t, err, "ordinal 7")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = Open(cancelled, sim.New(), Config{}, 0)
	assert.ErrorIs(t, err, context.Canceled)
}

// Without a Describe, a device reads its own launch limits, so launches are still checked.
func TestOpenWithoutDescribeReadsLimits(t *testing.T) {
	d := openSim(t)
	l := d.Limits()
	assert.Positive(t, l.MaxThreadsPerBlock)
	assert.Positive(t, l.MaxBlock.X)
	assert.Positive(t, l.MaxGrid.X)
	assert.Positive(t, l.MaxSharedMem)
	assert.Nil(t, d.Info())
}

// A closed device refuses everything with an ErrClosed error naming it.
func TestClosedDeviceRefusesWithErrClosed(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, sim.New(), Config{}, 0)
	require.NoError(t, err)
	require.NoError(t, d.Close())
	err = Do(ctx, d, func(backend.Device, *Tracker) error { return nil })
	assert.ErrorIs(t, err, ErrClosed)
	assert.ErrorContains(t, err, "device 0")
	assert.ErrorIs(t, Queue(ctx, d.Stream(), func(backend.Device, *Tracker, backend.Stream) error { return nil }).Wait(ctx), ErrClosed)
}

// countOp counts its runs.
type countOp struct {
	Msg
	runs int
}

func (o *countOp) Enqueue(backend.Device, *Tracker, backend.Stream) error {
	o.runs++
	return nil
}

func TestSubmitRefusesAReusedMsg(t *testing.T) {
	ctx := context.Background()
	d := openSim(t)
	o := &countOp{}
	first := Submit(ctx, d.Stream(), &o.Msg, o, Tracking{})
	require.NoError(t, first.Wait(ctx))
	second := Submit(ctx, d.Stream(), &o.Msg, o, Tracking{})
	assert.ErrorIs(t, second.Wait(ctx), actor.ErrFutureReused)
	assert.NotSame(t, first, second)
	require.NoError(t, Queue(ctx, d.Stream(), func(backend.Device, *Tracker, backend.Stream) error { return nil }).Wait(ctx), "the device goes on")
	assert.Equal(t, 1, o.runs)
	assert.ErrorIs(t, Submit(ctx, nil, &(&countOp{}).Msg, o, Tracking{}).Wait(ctx), ErrInvalidArgument)
}

// Each Tracking completes the future as it says; Then turns the result, and a panic in it
// becomes the future's error without stopping the stream's later futures.
func TestTrackingModes(t *testing.T) {
	ctx := context.Background()
	d := openSim(t)
	s := d.Stream()
	nop := func(backend.Device, *Tracker, backend.Stream) error { return nil }
	mine := errors.New("mine")
	require.NoError(t, QueueTracked(ctx, s, nop, Tracking{Queued: true}).Wait(ctx))
	require.NoError(t, QueueTracked(ctx, s, nop, Tracking{Marked: true}).Wait(ctx))
	var seen error = mine
	require.NoError(t, QueueTracked(ctx, s, nop, Tracking{Marked: true, Then: func(err error) error { seen = err; return err }}).Wait(ctx))
	assert.NoError(t, seen, "Then sees the GPU's result")
	assert.ErrorIs(t, QueueTracked(ctx, s, nop, Tracking{Then: func(error) error { return mine }}).Wait(ctx), mine)
	var pe *actor.PanicError
	require.ErrorAs(t, QueueTracked(ctx, s, nop, Tracking{Then: func(error) error { panic("boom") }}).Wait(ctx), &pe)
	assert.Equal(t, "boom", pe.Value)
	require.NoError(t, Queue(ctx, s, nop).Wait(ctx), "later futures still complete")
	assert.ErrorIs(t, Queue(ctx, s, func(backend.Device, *Tracker, backend.Stream) error { return mine }).Wait(ctx), mine,
		"an op's own error completes its future at once")
}

func TestStreamLifecycle(t *testing.T) {
	ctx := context.Background()
	d := openSim(t)
	s, err := NewStream(ctx, d, StreamConfig{})
	require.NoError(t, err)
	assert.Same(t, d, s.Device())
	assert.False(t, s.Own())
	assert.True(t, d.Stream().Own())
	_, err = NewStream(ctx, d, StreamConfig{Priority: 1 << 20, HasPriority: true})
	assert.ErrorIs(t, err, ErrInvalidArgument)

	released := 0
	e := &extFunc{func(backend.Device) error { released++; return nil }}
	assert.Same(t, e, s.Ext(func() StreamExt { return e }))
	assert.Same(t, e, s.Ext(func() StreamExt { panic("made twice") }), "Ext makes its state once")
	assert.Same(t, e, s.LoadedExt())
	require.NoError(t, s.Close(ctx))
	assert.Equal(t, 1, released, "the stream's state is released with it")
	assert.ErrorIs(t, s.Close(ctx), ErrClosed)
	assert.ErrorIs(t, Queue(ctx, s, func(backend.Device, *Tracker, backend.Stream) error { return nil }).Wait(ctx), ErrClosed)
	_, err = RunOn(ctx, s, func(backend.Device, *Tracker, backend.Stream) (int, error) { return 1, nil }).Await(ctx)
	assert.ErrorIs(t, err, ErrClosed)
	assert.ErrorIs(t, d.Stream().Close(ctx), ErrInvalidArgument, "the device's own stream closes with the device")
}

type extFunc struct{ f func(backend.Device) error }

func (e *extFunc) Release(rt backend.Device) error { return e.f(rt) }

// A *Buffer, a Span, and a type defined over Buffer or embedding one are all Mem, each naming
// its own range; a nil pointer of any of them reads as a nil buffer.
func TestRegionOfEveryMem(t *testing.T) {
	ctx := context.Background()
	d := openSim(t)
	var b Buffer
	require.NoError(t, Malloc(ctx, d, &b, 100))
	got, off, n := Region(&b)
	assert.Same(t, &b, got)
	assert.Equal(t, [2]uint64{0, 100}, [2]uint64{off, n})
	type face Buffer
	got, _, _ = Region((*face)(&b))
	assert.Same(t, &b, got, "a face type defined over Buffer")
	type embeds struct{ *face }
	got, _, _ = Region(embeds{(*face)(&b)})
	assert.Same(t, &b, got, "a type embedding one")
	sp := RangeOf(&b, 10, 20)
	got, off, n = Region(sp)
	assert.Same(t, &b, got)
	assert.Equal(t, [2]uint64{10, 20}, [2]uint64{off, n})
	_, off, _ = Region(RangeOf(sp, 5, 5))
	assert.Equal(t, uint64(15), off, "ranges are relative to their Mem")
	_, off, _ = Region(RangeOf(sp, 15, 10))
	assert.Greater(t, off, b.Size(), "a range past its Mem is made to fail when used")
	got, _, _ = Region(embeds{})
	assert.Nil(t, got)
	got, _, _ = Region((*Buffer)(nil))
	assert.Nil(t, got)
	got, _, _ = Region(nil)
	assert.Nil(t, got)
	_, _, err := d.Resolve("x", RangeOf(sp, 15, 10))
	assert.ErrorIs(t, err, ErrOutOfRange)
	_, _, err = d.Resolve("x", embeds{})
	assert.ErrorIs(t, err, ErrInvalidArgument)
	p, n, err := d.Resolve("x", sp)
	require.NoError(t, err)
	assert.Equal(t, b.ptr+10, p)
	assert.Equal(t, uint64(20), n)
	require.NoError(t, b.Close(ctx))
	_, _, err = d.Resolve("x", sp)
	assert.ErrorIs(t, err, ErrClosed)
}

// An allocation already queued is refused, and no second charge stays counted; a closed pool
// is refused before anything is queued.
func TestAllocAsyncRefusesAnAllocationInUse(t *testing.T) {
	ctx := context.Background()
	d := openSim(t)
	before, _ := d.Usage()
	var a AsyncAlloc
	require.NoError(t, AllocAsync(ctx, d.Stream(), &a, 64, nil))
	assert.ErrorIs(t, AllocAsync(ctx, d.Stream(), &a, 64, nil), ErrInvalidArgument, "an allocation in use is not a zero AsyncAlloc")
	require.NoError(t, a.Future().Wait(ctx))
	require.NoError(t, a.Close(ctx))

	p, err := NewPool(ctx, d, PoolConfig{})
	require.NoError(t, err)
	require.NoError(t, p.Close(ctx))
	var b AsyncAlloc
	assert.ErrorIs(t, AllocAsync(ctx, d.Stream(), &b, 64, p), ErrClosed)
	after, _ := d.Usage()
	assert.Equal(t, before, after, "nothing stays charged")
}

// Charges race from any goroutine; the limit is never passed and every refund balances.
func TestChargeIsAtomicUnderTheLimit(t *testing.T) {
	d, err := Open(context.Background(), sim.New(), Config{MemLimit: 1000}, 0)
	require.NoError(t, err)
	defer d.Close()
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for range 16 {
		wg.Go(func() {
			for range 100 {
				if d.Charge(KindDevice, 100) == nil {
					mu.Lock()
					granted++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 10, granted)
	by, limit := d.Usage()
	assert.Equal(t, KindUsage{Bytes: 1000, Count: 10}, by[KindDevice])
	assert.Equal(t, uint64(1000), limit)
	assert.ErrorIs(t, d.Charge(KindAsync, 1), ErrMemoryLimit)
	assert.NoError(t, d.Charge(KindPinned, 1<<30), "host memory is counted, not limited")
	for range 10 {
		d.Refund(KindDevice, 100)
	}
	d.Refund(KindPinned, 1<<30)
	by, _ = d.Usage()
	assert.Equal(t, [NumKinds]KindUsage{}, by)
}

// Usage is one reading: while charges and refunds of every limited kind race, the device
// bytes it shows never pass the limit, even for a moment between a refund and a charge.
func TestUsageIsOneReadingUnderTheLimit(t *testing.T) {
	const limit = 1000
	d, err := Open(context.Background(), sim.New(), Config{MemLimit: limit}, 0)
	require.NoError(t, err)
	defer d.Close()
	var wg sync.WaitGroup
	var ops atomic.Int64
	stop := make(chan struct{})
	kinds := []MemKind{KindDevice, KindAsync, KindManaged}
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := kinds[(w+i)%len(kinds)]
				if d.Charge(k, 300) == nil {
					runtime.Gosched() // held a while, so that the limit is reached
					d.Refund(k, 300)
				}
				ops.Add(1)
			}
		})
	}
	worst := uint64(0)
	// Long enough to catch a torn reading most runs without the fix; bounded in time for the
	// race detector, under which each step is many times slower.
	for start := time.Now(); ops.Load() < 300_000 && time.Since(start) < 2*time.Second; {
		by, _ := d.Usage()
		if sum := by[KindDevice].Bytes + by[KindAsync].Bytes + by[KindManaged].Bytes; sum > worst {
			worst = sum
		}
	}
	close(stop)
	wg.Wait()
	assert.LessOrEqual(t, worst, uint64(limit), "a reading of Usage passed the limit")
	by, _ := d.Usage()
	assert.Equal(t, [NumKinds]KindUsage{}, by)
}

func TestExtIsMadeOncePerKey(t *testing.T) {
	d := openSim(t)
	type key struct{}
	var wg sync.WaitGroup
	made := 0
	var mu sync.Mutex
	vals := make([]any, 8)
	for i := range vals {
		wg.Go(func() {
			vals[i] = d.Ext(key{}, func() any { mu.Lock(); made++; mu.Unlock(); return new(int) })
		})
	}
	wg.Wait()
	assert.Equal(t, 1, made)
	for _, v := range vals {
		assert.Same(t, vals[0], v)
	}
}

// RunTracked completes when its op calls done, from the tracker; an op's own error at once.
func TestRunTracked(t *testing.T) {
	ctx := context.Background()
	d := openSim(t)
	s := d.Stream()
	require.NoError(t, RunTracked(ctx, d, func(_ backend.Device, tr *Tracker, done func(error)) error {
		tr.After(s.h, done)
		return nil
	}).Wait(ctx))
	mine := errors.New("mine")
	assert.ErrorIs(t, RunTracked(ctx, d, func(backend.Device, *Tracker, func(error)) error { return mine }).Wait(ctx), mine)
}

// A Queued operation's future completes once its work is queued, while the GPU has yet to
// reach it; the stream's next tracked operation completes only after it.
func TestQueuedCompletesOnceQueued(t *testing.T) {
	ctx := context.Background()
	d := openSim(t)
	s, err := NewStream(ctx, d, StreamConfig{})
	require.NoError(t, err)
	gate := make(chan struct{})
	held := Queue(ctx, s, func(rt backend.Device, _ *Tracker, h backend.Stream) error {
		return rt.LaunchHostFunc(h, func() { <-gate })
	})
	o := &countOp{}
	require.NoError(t, Submit(ctx, s, &o.Msg, o, Tracking{Queued: true}).Wait(ctx))
	assert.Equal(t, 1, o.runs)
	assert.False(t, held.Ready(), "the stream is still held")
	after := Queue(ctx, s, func(backend.Device, *Tracker, backend.Stream) error { return nil })
	close(gate)
	require.NoError(t, after.Wait(ctx))
	assert.True(t, held.Ready(), "the GPU passed the held work before the later operation")
	assert.ErrorIs(t, Submit(ctx, s, &o.Msg, o, Tracking{Queued: true}).Wait(ctx), actor.ErrFutureReused)
}

// Calls that make something, cancelled at random points (before they are sent, while their
// message waits, while it runs, after it ran), leave nothing behind: whatever a caller got
// back it closes, and then the device holds no buffer, host buffer, module, stream or event,
// and counts no memory.
func TestCancelledMakersLeaveNothing(t *testing.T) {
	d := openSim(t)
	spec := backend.ModuleSpec{SimKernels: map[string]cuda.SimKernel{"k": func(*cuda.KernelCall) error { return nil }}}
	makers := []func(ctx context.Context) (func(context.Context) error, error){
		func(ctx context.Context) (func(context.Context) error, error) {
			b := new(Buffer)
			if err := Malloc(ctx, d, b, 4096); err != nil {
				return nil, err
			}
			return b.Close, nil
		},
		func(ctx context.Context) (func(context.Context) error, error) {
			h, err := MallocHost(ctx, d, 4096, 0)
			if err != nil {
				return nil, err
			}
			return h.Close, nil
		},
		func(ctx context.Context) (func(context.Context) error, error) {
			s, err := NewStream(ctx, d, StreamConfig{})
			if err != nil {
				return nil, err
			}
			return s.Close, nil
		},
		func(ctx context.Context) (func(context.Context) error, error) {
			e, err := NewEvent(ctx, d, 0)
			if err != nil {
				return nil, err
			}
			return e.Close, nil
		},
		func(ctx context.Context) (func(context.Context) error, error) {
			m, err := LoadModule(ctx, d, "m", spec, nil)
			if err != nil {
				return nil, err
			}
			return m.Close, nil
		},
	}
	var wg sync.WaitGroup
	var made, cancelled atomic.Int64
	for g := range 8 {
		wg.Go(func() {
			for i := range 250 {
				ctx, cancel := context.WithCancel(context.Background())
				if (g+i)%3 == 0 {
					cancel() // before it is sent
				} else {
					go func() {
						for range (g * i) % 50 {
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
				made.Add(1)
				assert.NoError(t, closeIt(context.Background()))
			}
		})
	}
	wg.Wait()
	t.Logf("%d made and closed, %d cancelled", made.Load(), cancelled.Load())
	require.Positive(t, cancelled.Load())
	ctx := context.Background()
	require.NoError(t, d.Synchronize(ctx)) // closes in flight have run
	live, err := Run(ctx, d, func(_ backend.Device, tr *Tracker) ([4]int, error) {
		n := 0
		for b := d.live.buffers.head; b != nil; b = b.next {
			n++
		}
		return [4]int{n, len(d.live.hosts), len(d.live.modules), len(tr.owned)}, nil
	}).Await(ctx)
	require.NoError(t, err)
	assert.Equal(t, [4]int{}, live, "buffers, host buffers, modules, owned streams and events")
	by, _ := d.Usage()
	assert.Equal(t, [NumKinds]KindUsage{}, by)
}

// A barrier (AfterAll, as Buffer.Close and Synchronize use) registered on a stream whose Close
// is waiting for its work completes with that work, and nothing is recorded on the stream
// once it is destroyed; a stream given the same handle afterwards is tracked afresh.
func TestBarrierOnAClosingStream(t *testing.T) {
	ctx := context.Background()
	d := openSim(t)
	s, err := NewStream(ctx, d, StreamConfig{})
	require.NoError(t, err)
	gate := make(chan struct{})
	held := Queue(ctx, s, func(rt backend.Device, _ *Tracker, h backend.Stream) error {
		return rt.LaunchHostFunc(h, func() { <-gate })
	})
	closed := make(chan error, 1)
	go func() { closed <- s.Close(ctx) }()
	require.Eventually(t, func() bool { return s.Alive() != nil }, 10*time.Second, time.Millisecond, "Close was sent")
	var b Buffer
	require.NoError(t, Malloc(ctx, d, &b, 64))
	freed := make(chan error, 1)
	go func() { freed <- b.Close(ctx) }()
	synced := make(chan error, 1)
	go func() { synced <- d.Synchronize(ctx) }()
	close(gate)
	require.NoError(t, held.Wait(ctx))
	require.NoError(t, <-closed)
	require.NoError(t, <-freed)
	require.NoError(t, <-synced)
	s2, err := NewStream(ctx, d, StreamConfig{})
	require.NoError(t, err)
	require.NoError(t, Queue(ctx, s2, func(backend.Device, *Tracker, backend.Stream) error { return nil }).Wait(ctx))
	require.NoError(t, d.Synchronize(ctx))
	require.NoError(t, d.Err())
}
