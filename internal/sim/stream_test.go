package sim

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/testleak"
)

func TestStreamOrdering(t *testing.T) {
	_, d0, _ := open(t)
	k := kernels(t, d0, map[string]backend.SimKernel{
		"slowfill": func(c *backend.KernelCall) error {
			time.Sleep(30 * time.Millisecond)
			return fillKernel(c)
		},
	})
	s := mkStream(t, d0)
	const n = 1000
	p := malloc(t, d0, n*8)

	// Into pinned memory: asynchronous, visible after StreamSynchronize.
	hp, err := d0.HostAlloc(n*8, 0)
	require.NoError(t, err)
	out := unsafe.Slice((*float64)(hp), n)
	launch(t, d0, k["slowfill"], s, ptrArg(p), u64Arg(n), f64Arg(42))
	require.NoError(t, d0.CopyDtoH(hp, p, n*8, s))
	require.NoError(t, d0.StreamSynchronize(s))
	for i := range out {
		require.Equal(t, 42.0, out[i])
	}
	require.NoError(t, d0.StreamQuery(s))

	// Into pageable memory: CopyDtoH itself waits for the kernel before it.
	launch(t, d0, k["slowfill"], s, ptrArg(p), u64Arg(n), f64Arg(7))
	got := readFloats(t, d0, p, n, s)
	for i := range got {
		require.Equal(t, 7.0, got[i])
	}
	require.NoError(t, d0.HostFree(hp))
}

func TestStreamsRunConcurrently(t *testing.T) {
	_, d0, _ := open(t)
	g := newGate(t)
	k := kernels(t, d0, map[string]backend.SimKernel{"gated": gatedFill(g), "fill": fillKernel})
	a, b := mkStream(t, d0), mkStream(t, d0)
	pa, pb := malloc(t, d0, 8), malloc(t, d0, 8)

	launch(t, d0, k["gated"], a, ptrArg(pa), u64Arg(1), f64Arg(1))
	launch(t, d0, k["fill"], b, ptrArg(pb), u64Arg(1), f64Arg(2))
	require.True(t, finishes(5*time.Second, func() { assert.NoError(t, d0.StreamSynchronize(b)) }),
		"stream B must not wait for the kernel blocked on stream A")
	assert.Equal(t, []float64{2}, readFloats(t, d0, pb, 1, b))

	err := d0.StreamQuery(a)
	requireCode(t, err, cudaerr.NotReady)
	assert.NoError(t, d0.LastError(), "NotReady is not recorded as an error")

	g.release()
	require.NoError(t, d0.StreamSynchronize(a))
	require.NoError(t, d0.StreamQuery(a))
	assert.Equal(t, []float64{1}, readFloats(t, d0, pa, 1, a))
}

func TestStreamWaitEventSameDevice(t *testing.T) {
	_, d0, _ := open(t)
	g := newGate(t)
	k := kernels(t, d0, map[string]backend.SimKernel{"gated": gatedFill(g)})
	a, b := mkStream(t, d0), mkStream(t, d0)
	p, q := malloc(t, d0, 8), malloc(t, d0, 8)
	e, err := d0.EventCreate(backend.EventDisableTiming)
	require.NoError(t, err)
	done, err := d0.EventCreate(0)
	require.NoError(t, err)

	launch(t, d0, k["gated"], a, ptrArg(p), u64Arg(1), f64Arg(7))
	require.NoError(t, d0.EventRecord(e, a))
	require.NoError(t, d0.StreamWaitEvent(b, e))
	require.NoError(t, d0.CopyDtoD(q, p, 8, b))
	require.NoError(t, d0.EventRecord(done, b))

	time.Sleep(20 * time.Millisecond)
	requireCode(t, d0.EventQuery(done), cudaerr.NotReady, "B waits for A's event")
	requireCode(t, d0.StreamQuery(b), cudaerr.NotReady)
	g.release()
	require.NoError(t, d0.EventSynchronize(done))
	assert.Equal(t, []float64{7}, readFloats(t, d0, q, 1, b))

	never, err := d0.EventCreate(0)
	require.NoError(t, err)
	require.NoError(t, d0.StreamWaitEvent(b, never), "an event never recorded imposes no wait")
	require.NoError(t, d0.StreamSynchronize(b))
}

func TestStreamWaitEventUsesRecordAtCallTime(t *testing.T) {
	_, d0, _ := open(t)
	g := newGate(t)
	k := kernels(t, d0, map[string]backend.SimKernel{"wait": func(*backend.KernelCall) error { <-g.ch; return nil }})
	a, b, c := mkStream(t, d0), mkStream(t, d0), mkStream(t, d0)
	e, err := d0.EventCreate(0)
	require.NoError(t, err)
	launch(t, d0, k["wait"], a)
	require.NoError(t, d0.EventRecord(e, a))
	require.NoError(t, d0.StreamWaitEvent(b, e))
	require.NoError(t, d0.EventRecord(e, c)) // re-recorded on an idle stream: B still waits for A
	require.NoError(t, d0.EventSynchronize(e))
	var ran atomic.Bool
	require.NoError(t, d0.LaunchHostFunc(b, func() { ran.Store(true) }))
	time.Sleep(20 * time.Millisecond)
	assert.False(t, ran.Load())
	g.release()
	require.NoError(t, d0.StreamSynchronize(b))
	assert.True(t, ran.Load())
}

func TestStreamWaitEventAcrossDevices(t *testing.T) {
	_, d0, d1 := open(t)
	g := newGate(t)
	var finished atomic.Bool
	k := kernels(t, d0, map[string]backend.SimKernel{
		"gated": func(c *backend.KernelCall) error {
			<-g.ch
			defer finished.Store(true)
			return fillKernel(c)
		},
	})
	s0, s1 := mkStream(t, d0), mkStream(t, d1)
	p0, p1 := malloc(t, d0, 8), malloc(t, d1, 8)
	e0, err := d0.EventCreate(backend.EventDisableTiming)
	require.NoError(t, err)

	launch(t, d0, k["gated"], s0, ptrArg(p0), u64Arg(1), f64Arg(3))
	require.NoError(t, d0.EventRecord(e0, s0))
	require.NoError(t, d1.StreamWaitEvent(s1, e0), "a device may wait for another device's event")
	var sawFinished atomic.Bool
	require.NoError(t, d1.LaunchHostFunc(s1, func() { sawFinished.Store(finished.Load()) }))
	require.NoError(t, d1.CopyDtoD(p1, p0, 8, s1)) // peer copy, ordered after device 0's kernel

	time.Sleep(20 * time.Millisecond)
	requireCode(t, d1.StreamQuery(s1), cudaerr.NotReady)
	requireCode(t, d1.EventQuery(e0), cudaerr.NotReady, "any device may query any event")
	g.release()
	require.NoError(t, d1.StreamSynchronize(s1))
	assert.True(t, sawFinished.Load())
	assert.Equal(t, []float64{3}, readFloats(t, d1, p1, 1, s1))
	require.NoError(t, d1.EventQuery(e0))
}

func TestEvents(t *testing.T) {
	_, d0, d1 := open(t)
	g := newGate(t)
	k := kernels(t, d0, map[string]backend.SimKernel{
		"sleep": func(*backend.KernelCall) error {
			<-g.ch
			time.Sleep(20 * time.Millisecond)
			return nil
		},
	})
	s := mkStream(t, d0)

	_, err := d0.EventCreate(1 << 5)
	requireCode(t, err, cudaerr.InvalidValue)
	_, err = d0.EventCreate(backend.EventInterprocess)
	requireCode(t, err, cudaerr.InvalidValue, "interprocess needs DisableTiming")
	ipc, err := d0.EventCreate(backend.EventInterprocess | backend.EventDisableTiming)
	require.NoError(t, err)

	start, err := d0.EventCreate(backend.EventDefault)
	require.NoError(t, err)
	end, err := d0.EventCreate(backend.EventBlockingSync)
	require.NoError(t, err)
	assert.NotZero(t, start)
	assert.NotEqual(t, start, end)

	// Never recorded: complete, but has no time.
	require.NoError(t, d0.EventQuery(start))
	require.NoError(t, d0.EventSynchronize(start))
	_, err = d0.EventElapsed(start, end)
	requireCode(t, err, cudaerr.InvalidResourceHandle)

	require.NoError(t, d0.EventRecord(start, s))
	launch(t, d0, k["sleep"], s)
	require.NoError(t, d0.EventRecord(end, s))
	requireCode(t, d0.EventQuery(end), cudaerr.NotReady)
	_, err = d0.EventElapsed(start, end)
	requireCode(t, err, cudaerr.NotReady)
	g.release()
	require.NoError(t, d0.EventSynchronize(end))
	require.NoError(t, d0.EventQuery(end))
	ms, err := d0.EventElapsed(start, end)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, ms, float32(20))
	ms1, err := d1.EventElapsed(start, end)
	require.NoError(t, err, "any device may time any events")
	assert.Equal(t, ms, ms1)

	require.NoError(t, d0.EventRecord(ipc, s))
	require.NoError(t, d0.EventSynchronize(ipc))
	_, err = d0.EventElapsed(start, ipc)
	requireCode(t, err, cudaerr.InvalidResourceHandle, "timing disabled")

	s1 := mkStream(t, d1)
	requireCode(t, d1.EventRecord(start, s1), cudaerr.InvalidResourceHandle, "event of device 0 on a stream of device 1")
	requireCode(t, d0.EventRecord(start, s1), cudaerr.InvalidResourceHandle, "stream of device 1")

	require.NoError(t, d0.EventDestroy(end))
	requireCode(t, d0.EventDestroy(end), cudaerr.InvalidResourceHandle)
	requireCode(t, d0.EventQuery(end), cudaerr.InvalidResourceHandle)
	requireCode(t, d0.EventRecord(end, s), cudaerr.InvalidResourceHandle)
	requireCode(t, d0.StreamWaitEvent(s, end), cudaerr.InvalidResourceHandle)
	_, err = d0.EventElapsed(start, end)
	requireCode(t, err, cudaerr.InvalidResourceHandle)
}

func TestHostFuncOrdering(t *testing.T) {
	opt, logs := observed()
	_, d0, _ := open(t, opt)
	var order []int
	k := kernels(t, d0, map[string]backend.SimKernel{
		"append": func(c *backend.KernelCall) error { order = append(order, int(c.Uint64(0))); return nil },
	})
	s := mkStream(t, d0)
	for i := range 100 {
		if i%2 == 0 {
			require.NoError(t, d0.LaunchHostFunc(s, func() { order = append(order, i) }))
		} else {
			launch(t, d0, k["append"], s, u64Arg(uint64(i)))
		}
		if i == 50 {
			require.NoError(t, d0.LaunchHostFunc(s, func() { panic("host func bug") }))
		}
	}
	require.NoError(t, d0.StreamSynchronize(s), "a panicking host function does not fail the stream")
	require.Len(t, order, 100)
	for i, v := range order {
		require.Equal(t, i, v)
	}
	assert.Equal(t, 1, logs.FilterMessageSnippet("host function panicked").Len())

	requireCode(t, d0.LaunchHostFunc(s, nil), cudaerr.InvalidValue)
}

func TestLegacyDefaultStream(t *testing.T) {
	_, d0, _ := open(t)
	g1, g2 := newGate(t), newGate(t)
	k := kernels(t, d0, map[string]backend.SimKernel{
		"wait1": func(*backend.KernelCall) error { <-g1.ch; return nil },
		"wait2": func(*backend.KernelCall) error { <-g2.ch; return nil },
	})
	blocking, err := d0.StreamCreate(backend.StreamDefault, 0)
	require.NoError(t, err)
	nonBlocking := mkStream(t, d0)

	// Work on the null stream waits for blocking streams...
	launch(t, d0, k["wait1"], blocking)
	var nullRan atomic.Bool
	require.NoError(t, d0.LaunchHostFunc(0, func() { nullRan.Store(true) }))
	// ...and a blocking stream's later work waits for the null stream; a non-blocking one does not.
	var blockingRan, nonBlockingRan atomic.Bool
	require.NoError(t, d0.LaunchHostFunc(blocking, func() { blockingRan.Store(true) }))
	require.NoError(t, d0.LaunchHostFunc(nonBlocking, func() { nonBlockingRan.Store(true) }))
	require.NoError(t, d0.StreamSynchronize(nonBlocking))
	assert.True(t, nonBlockingRan.Load())
	time.Sleep(20 * time.Millisecond)
	assert.False(t, nullRan.Load())
	g1.release()
	require.NoError(t, d0.StreamSynchronize(0))
	assert.True(t, nullRan.Load())
	require.NoError(t, d0.StreamSynchronize(blocking))
	assert.True(t, blockingRan.Load())

	// A kernel on the null stream holds back a blocking stream's later work.
	launch(t, d0, k["wait2"], 0)
	blockingRan.Store(false)
	require.NoError(t, d0.LaunchHostFunc(blocking, func() { blockingRan.Store(true) }))
	time.Sleep(20 * time.Millisecond)
	assert.False(t, blockingRan.Load())
	g2.release()
	require.NoError(t, d0.Synchronize())
	assert.True(t, blockingRan.Load())
	require.NoError(t, d0.StreamDestroy(blocking))
	requireCode(t, d0.StreamDestroy(0), cudaerr.InvalidResourceHandle)
}

func TestDestroyedStream(t *testing.T) {
	_, d0, d1 := open(t)
	g := newGate(t)
	k := kernels(t, d0, map[string]backend.SimKernel{"wait": func(*backend.KernelCall) error { <-g.ch; return nil }})
	s, err := d0.StreamCreate(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	assert.NotZero(t, s)
	p := malloc(t, d0, 64)
	e, err := d0.EventCreate(0)
	require.NoError(t, err)

	launch(t, d0, k["wait"], s)
	ran := make(chan struct{})
	require.NoError(t, d0.LaunchHostFunc(s, func() { close(ran) }))
	require.NoError(t, d0.StreamDestroy(s), "destroying a busy stream is allowed")

	host := make([]byte, 64)
	h := hostPtr(host)
	calls := map[string]func() error{
		"StreamSynchronize": func() error { return d0.StreamSynchronize(s) },
		"StreamQuery":       func() error { return d0.StreamQuery(s) },
		"StreamDestroy":     func() error { return d0.StreamDestroy(s) },
		"StreamWaitEvent":   func() error { return d0.StreamWaitEvent(s, e) },
		"EventRecord":       func() error { return d0.EventRecord(e, s) },
		"CopyHtoD":          func() error { return d0.CopyHtoD(p, h, 8, s) },
		"CopyDtoH":          func() error { return d0.CopyDtoH(h, p, 8, s) },
		"CopyDtoD":          func() error { return d0.CopyDtoD(p, p+8, 8, s) },
		"Memset":            func() error { return d0.Memset(p, 0, 8, s) },
		"LaunchHostFunc":    func() error { return d0.LaunchHostFunc(s, func() {}) },
		"Launch": func() error {
			return d0.Launch(k["wait"], backend.Dim3{X: 1, Y: 1, Z: 1}, backend.Dim3{X: 1, Y: 1, Z: 1}, 0, s, nil)
		},
	}
	for name, call := range calls {
		requireCode(t, call(), cudaerr.InvalidResourceHandle, name)
	}

	g.release()
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("work queued before StreamDestroy did not complete")
	}
	require.NoError(t, d0.Synchronize())

	// Handles that were never streams.
	requireCode(t, d0.StreamSynchronize(backend.Stream(e)), cudaerr.InvalidResourceHandle, "an event is not a stream")
	requireCode(t, d0.StreamQuery(backend.Stream(0xdead_beef)), cudaerr.InvalidResourceHandle)
	s1 := mkStream(t, d1)
	requireCode(t, d0.Memset(p, 0, 8, s1), cudaerr.InvalidResourceHandle, "work goes on the device's own streams")
	require.NoError(t, d0.StreamSynchronize(s1), "but any stream may be waited for")
	_, err = d0.StreamCreate(4, 0)
	requireCode(t, err, cudaerr.InvalidValue)

	// Priorities are clamped to the device's range, like CUDA.
	for prio, want := range map[int]int{10: 0, -100: -5, -3: -3} {
		h, err := d0.StreamCreate(backend.StreamNonBlocking, prio)
		require.NoError(t, err)
		st, err := d0.(*device).stream("test", h)
		require.NoError(t, err)
		assert.Equal(t, want, st.priority)
		require.NoError(t, d0.StreamDestroy(h))
	}
}

func TestHandlesUnique(t *testing.T) {
	_, d0, d1 := open(t)
	seen := map[uintptr]bool{}
	add := func(h uintptr) {
		require.NotZero(t, h)
		require.False(t, seen[h], "handle %#x handed out twice", h)
		seen[h] = true
	}
	for _, d := range []backend.Device{d0, d1} {
		for range 5 {
			s, err := d.StreamCreate(0, 0)
			require.NoError(t, err)
			add(uintptr(s))
			require.NoError(t, d.StreamDestroy(s))
			e, err := d.EventCreate(0)
			require.NoError(t, err)
			add(uintptr(e))
			m, err := d.LoadModule(backend.ModuleSpec{SimKernels: map[string]backend.SimKernel{"k": fillKernel}})
			require.NoError(t, err)
			add(uintptr(m))
			k, err := d.ModuleKernel(m, "k")
			require.NoError(t, err)
			add(uintptr(k))
		}
	}
}

func TestNoGoroutineLeak(t *testing.T) {
	runtime.GC()
	base := testleak.Base()
	_, d0, d1 := open(t)
	for _, d := range []backend.Device{d0, d1} {
		k := kernels(t, d, map[string]backend.SimKernel{"fill": fillKernel})
		p := malloc(t, d, 8*64)
		e, err := d.EventCreate(0)
		require.NoError(t, err)
		var prev backend.Stream
		for i := range 20 {
			flags := backend.StreamNonBlocking
			if i%2 == 0 {
				flags = backend.StreamDefault
			}
			s, err := d.StreamCreate(flags, 0)
			require.NoError(t, err)
			if prev != 0 {
				require.NoError(t, d.StreamWaitEvent(s, e))
			}
			launch(t, d, k["fill"], s, ptrArg(p), u64Arg(64), f64Arg(float64(i)))
			require.NoError(t, d.EventRecord(e, s))
			require.NoError(t, d.LaunchHostFunc(s, func() { time.Sleep(time.Millisecond) }))
			require.NoError(t, d.StreamDestroy(s)) // destroyed while busy
			prev = s
		}
		require.NoError(t, d.LaunchHostFunc(0, func() {}))
	}
	require.NoError(t, d0.Synchronize())
	require.NoError(t, d1.Synchronize())
	testleak.Settle(t, base) // the stream goroutines end once their work is done
	for _, d := range []*device{d0.(*device), d1.(*device)} {
		d.strMu.Lock()
		assert.Empty(t, d.blocking, "destroyed streams are forgotten once drained")
		d.strMu.Unlock()
	}
}

func TestFreeWaitsForDevice(t *testing.T) {
	_, d0, _ := open(t)
	g := newGate(t)
	k := kernels(t, d0, map[string]backend.SimKernel{"gated": gatedFill(g)})
	s := mkStream(t, d0)
	p, q := malloc(t, d0, 8), malloc(t, d0, 8)
	launch(t, d0, k["gated"], s, ptrArg(p), u64Arg(1), f64Arg(1))
	var freed sync.WaitGroup
	freed.Add(1)
	var returned atomic.Bool
	go func() {
		defer freed.Done()
		assert.NoError(t, d0.Free(q))
		returned.Store(true)
	}()
	time.Sleep(20 * time.Millisecond)
	assert.False(t, returned.Load(), "cudaFree synchronizes the device")
	g.release()
	freed.Wait()
	assert.True(t, returned.Load())
}

func TestDevicesConcurrently(t *testing.T) {
	const devices, n = 3, 256
	b, _, _ := open(t, WithDevices(devices))
	type rig struct {
		d      backend.Device
		scale  backend.Kernel
		s1, s2 backend.Stream
		e      backend.Event
		p, q   backend.DevicePtr
		hp     unsafe.Pointer
	}
	rigs := make([]rig, devices)
	for ord := range rigs {
		d, err := b.Open(ord)
		require.NoError(t, err)
		k := kernels(t, d, map[string]backend.SimKernel{
			"scale": func(c *backend.KernelCall) error {
				xs := cuda.SimSlice[float64](c, 0, int(c.Uint64(1)))
				for i := range xs {
					xs[i] *= c.Float64(2)
				}
				return nil
			},
		})
		e, err := d.EventCreate(backend.EventDisableTiming)
		require.NoError(t, err)
		hp, err := d.HostAlloc(n*8, 0)
		require.NoError(t, err)
		rigs[ord] = rig{d: d, scale: k["scale"], s1: mkStream(t, d), s2: mkStream(t, d), e: e,
			p: malloc(t, d, n*8), q: malloc(t, d, n*8), hp: hp}
	}
	var wg sync.WaitGroup
	for ord, r := range rigs {
		wg.Add(1)
		go func() { // each device driven by its own goroutine, as by its actor
			defer wg.Done()
			d := r.d
			out := unsafe.Slice((*float64)(r.hp), n)
			in := make([]float64, n)
			for it := range 50 {
				for i := range in {
					in[i] = float64(i + it + ord)
				}
				assert.NoError(t, d.CopyHtoD(r.p, hostPtr(in), bytesOf(in), r.s1))
				assert.NoError(t, d.Launch(r.scale, backend.Dim3{X: 1, Y: 1, Z: 1}, backend.Dim3{X: n, Y: 1, Z: 1}, 0, r.s1,
					[]backend.Arg{ptrArg(r.p), u64Arg(n), f64Arg(2)}))
				assert.NoError(t, d.EventRecord(r.e, r.s1))
				assert.NoError(t, d.StreamWaitEvent(r.s2, r.e))
				assert.NoError(t, d.CopyDtoD(r.q, r.p, n*8, r.s2))
				assert.NoError(t, d.CopyDtoH(r.hp, r.q, n*8, r.s2))
				assert.NoError(t, d.StreamSynchronize(r.s2))
				for i := range out {
					if out[i] != 2*in[i] {
						assert.Equal(t, 2*in[i], out[i], "device %d iteration %d element %d", ord, it, i)
						return
					}
				}
			}
			assert.NoError(t, d.HostFree(r.hp))
		}()
	}
	wg.Wait()
}
