package streams_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testfix"
	"github.com/gpuactor/gpuactor/streams"
)

func TestFuturesCompleteWhenTheGPUGetsThere(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		// The stream is held by a host function until the launches are all queued, so that
		// none can have run when the first is looked at, however slowly the test goes.
		gate := make(chan struct{})
		held := s.HostFunc(f.Ctx, func() { <-gate })
		slow := s.Launch(f.Ctx, f.spin, one(), spinCycles(20))
		buf := f.Buffer(t, 4*1024)
		futs := make([]*streams.Future, 50)
		for i := range futs {
			futs[i] = s.Launch(f.Ctx, f.add, cuda.LaunchConfig{Grid: cuda.Dim(4), Block: cuda.Dim(256)}, buf, uint32(1), int32(1024))
		}
		assert.False(t, slow.Ready(), "queued behind a held host function")
		assert.False(t, futs[0].Ready(), "queued behind a held host function and a kernel")
		close(gate)
		testfix.Await(t, f.Ctx, futs[len(futs)-1])
		assert.True(t, held.Ready(), "everything before the last op completed with it")
		assert.True(t, slow.Ready(), "everything before the last op completed with it")
		for i, fu := range futs {
			require.True(t, fu.Ready(), "future %d", i)
			require.NoError(t, fu.Err())
		}
		got := make([]uint32, 1024)
		testdev.Read(t, f.Ctx, got, buf)
		for i, v := range got {
			require.Equal(t, uint32(50), v, "element %d", i)
		}
	})
}

func TestOneStreamRunsInOrder(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		const n = 4099
		s := f.Stream(t)
		in, out := f.pinned(t, 4*n), f.pinned(t, 4*n)
		vals := device.HostSlice[uint32](in)
		for i := range vals {
			vals[i] = uint32(i * 3)
		}
		buf := f.Buffer(t, 4*n)
		cfg := cuda.LaunchConfig{Grid: cuda.Dim((n + 127) / 128), Block: cuda.Dim(128)}
		s.CopyHostToDevice(f.Ctx, buf, in)
		for range 3 {
			s.Launch(f.Ctx, f.add, cfg, buf, uint32(5), int32(n))
		}
		testfix.Await(t, f.Ctx, s.CopyDeviceToHost(f.Ctx, out, buf))
		for i, v := range device.HostSlice[uint32](out)[:n] {
			require.Equal(t, uint32(i*3+15), v, "element %d", i)
		}
		// Memset and a device-to-device copy keep the order too.
		other := f.Buffer(t, 4*n)
		s.Memset(f.Ctx, other, 0)
		s.Copy(f.Ctx, device.Range(other, 0, 8), device.Range(buf, 0, 8))
		testfix.Await(t, f.Ctx, s.CopyDeviceToHost(f.Ctx, out, other))
		got := device.HostSlice[uint32](out)
		assert.Equal(t, []uint32{15, 18, 0}, got[:3])
	})
}

// TestWaitOrdersStreams: s2's add must see s1's memset, which runs after a long kernel; only
// the event wait orders them.
func TestWaitOrdersStreams(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s1, s2 := f.Stream(t), f.Stream(t)
		ev, err := streams.NewEvent(f.Ctx, f.Dev, streams.DisableTiming)
		require.NoError(t, err)
		buf := f.Buffer(t, 4*256)
		require.NoError(t, streams.Default(f.Dev).Memset(f.Ctx, buf, 0).Wait(f.Ctx))
		s1.Launch(f.Ctx, f.spin, one(), spinCycles(50))
		s1.Memset(f.Ctx, buf, 1) // bytes 0x01: each uint32 becomes 0x01010101
		s1.Record(f.Ctx, ev)
		s2.Wait(f.Ctx, ev)
		s2.Launch(f.Ctx, f.add, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(256)}, buf, uint32(1), int32(256))
		require.NoError(t, s2.Synchronize(f.Ctx))
		got := make([]uint32, 256)
		testdev.Read(t, f.Ctx, got, buf)
		for i, v := range got {
			require.Equal(t, uint32(0x01010102), v, "element %d", i)
		}
	})
}

// TestWaitAcrossDevices: an event of one device waited on by a stream of another, for every
// ordered pair of devices at once, each on streams of its own (with one GPU, device 0 and a
// second Device on it, which CUDA treats alike). One gate holds every recording stream, so
// a single pause shows every waiting stream held, however many pairs there are.
func TestWaitAcrossDevices(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		n, err := device.Count(f.Ctx, f.Opts...)
		require.NoError(t, err)
		var devs []*device.Device
		pairs := [][2]int{{0, 1}}
		if n == 1 {
			twin, err := device.Open(f.Ctx, 0, f.Opts...)
			require.NoError(t, err)
			defer twin.Close()
			devs = []*device.Device{f.Dev, twin}
		} else {
			devs = testdev.All(t, f.Ctx, f.Opts, f.Dev)
			pairs = testdev.Pairs(n)
		}
		gate := make(chan struct{})
		var mu sync.Mutex
		var seq int
		recorded, after := map[[2]int]int{}, map[[2]int]int{} // when each pair's host functions ran
		note := func(m map[[2]int]int, p [2]int) { mu.Lock(); seq++; m[p] = seq; mu.Unlock() }
		waited := make([]*streams.Future, len(pairs))
		lasts := make([]*streams.Future, len(pairs))
		for k, p := range pairs {
			s1, s2 := mustStream(t, f.Ctx, devs[p[0]]), mustStream(t, f.Ctx, devs[p[1]])
			defer s1.Close(f.Ctx)
			defer s2.Close(f.Ctx)
			ev, err := streams.NewEvent(f.Ctx, devs[p[0]])
			require.NoError(t, err)
			s1.HostFunc(f.Ctx, func() { <-gate; note(recorded, p) })
			s1.Record(f.Ctx, ev)
			waited[k] = s2.Wait(f.Ctx, ev)
			lasts[k] = s2.HostFunc(f.Ctx, func() { note(after, p) })
		}
		time.Sleep(20 * time.Millisecond)
		for k, p := range pairs {
			assert.False(t, lasts[k].Ready(), "device %d waits for device %d", p[1], p[0])
		}
		close(gate)
		for k, p := range pairs {
			testfix.Await(t, f.Ctx, lasts[k])
			require.NoError(t, waited[k].Err())
			mu.Lock()
			assert.Positive(t, recorded[p], "device %d ran on before device %d's event", p[1], p[0])
			assert.Less(t, recorded[p], after[p], "device %d ran on before device %d's event", p[1], p[0])
			mu.Unlock()
		}
	})
}

func mustStream(t *testing.T, ctx context.Context, dev *device.Device) *streams.Stream {
	t.Helper()
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	return s
}

func TestEventTimingQueryAndSynchronize(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		start, err := streams.NewEvent(f.Ctx, f.Dev)
		require.NoError(t, err)
		end, err := streams.NewEvent(f.Ctx, f.Dev)
		require.NoError(t, err)
		done, err := end.Query(f.Ctx)
		require.NoError(t, err)
		assert.True(t, done, "a never-recorded event counts as complete")
		// end is recorded behind a kernel and a host function that holds the stream until the
		// first Query has answered: not done, however slowly the test goes.
		gate := make(chan struct{})
		sent := time.Now()
		s.Record(f.Ctx, start)
		s.Launch(f.Ctx, f.spin, one(), spinCycles(30))
		s.HostFunc(f.Ctx, func() { <-gate })
		s.Record(f.Ctx, end)
		done, err = end.Query(f.Ctx)
		require.NoError(t, err)
		assert.False(t, done, "recorded behind a kernel and a held host function")
		close(gate)
		require.NoError(t, end.Synchronize(f.Ctx))
		wall := time.Since(sent)
		done, err = end.Query(f.Ctx)
		require.NoError(t, err)
		assert.True(t, done)
		d, err := streams.Elapsed(f.Ctx, start, end)
		require.NoError(t, err)
		assert.Greater(t, d, 15*time.Millisecond, "at least the kernel's spin lies between the records")
		// Both records happened between sent and Synchronize's return (a millisecond's slack
		// for the GPU's clock against the host's).
		assert.LessOrEqual(t, d, wall+time.Millisecond, "no longer than the host waited for them")

		untimed, err := streams.NewEvent(f.Ctx, f.Dev, streams.DisableTiming)
		require.NoError(t, err)
		_, err = streams.Elapsed(f.Ctx, start, untimed)
		assert.ErrorIs(t, err, device.ErrInvalidArgument)
		require.NoError(t, untimed.Close(f.Ctx))
		assert.ErrorIs(t, untimed.Close(f.Ctx), device.ErrClosed)
		_, err = untimed.Query(f.Ctx)
		assert.ErrorIs(t, err, device.ErrClosed)
	})
}

func TestHostFunctions(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		var mu sync.Mutex
		var seen []int
		var last *streams.Future
		for i := range 20 {
			last = s.HostFunc(f.Ctx, func() { mu.Lock(); seen = append(seen, i); mu.Unlock() })
		}
		testfix.Await(t, f.Ctx, last)
		mu.Lock()
		assert.Equal(t, 20, len(seen))
		for i, v := range seen {
			assert.Equal(t, i, v, "host functions of one stream run in order")
		}
		mu.Unlock()

		err := s.HostFunc(f.Ctx, func() { panic("callback bug") }).Wait(f.Ctx)
		var pe *actor.PanicError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "callback bug", pe.Value)
		require.NoError(t, s.Synchronize(f.Ctx), "the stream goes on after a panicking callback")

		// From many goroutines on many streams at once.
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := streams.New(f.Ctx, f.Dev)
				if err != nil {
					errs <- err
					return
				}
				defer st.Close(f.Ctx)
				ran := false
				err = st.HostFunc(f.Ctx, func() { ran = true }).Wait(f.Ctx)
				if err == nil && !ran {
					err = errors.New("host function did not run before its future completed")
				}
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
	})
}

func TestQuerySynchronizeAndClose(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s, err := streams.New(f.Ctx, f.Dev)
		require.NoError(t, err)
		idle, err := s.Query(f.Ctx)
		require.NoError(t, err)
		assert.True(t, idle)
		// A host function holds the stream until Query has answered: busy, however slowly
		// the test goes.
		gate := make(chan struct{})
		held := s.HostFunc(f.Ctx, func() { <-gate })
		slow := s.Launch(f.Ctx, f.spin, one(), spinCycles(50))
		idle, err = s.Query(f.Ctx)
		require.NoError(t, err)
		assert.False(t, idle)
		// Close waits for the work in flight and completes its futures.
		close(gate)
		require.NoError(t, s.Close(f.Ctx))
		assert.True(t, held.Ready())
		assert.NoError(t, held.Err())
		assert.True(t, slow.Ready())
		assert.NoError(t, slow.Err())
		assert.ErrorIs(t, s.Close(f.Ctx), device.ErrClosed)
		err = s.Launch(f.Ctx, f.spin, one(), int64(1)).Wait(f.Ctx)
		assert.ErrorIs(t, err, device.ErrClosed)
		_, err = s.Query(f.Ctx)
		assert.ErrorIs(t, err, device.ErrClosed)
	})
}

func TestPriorities(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		least, greatest, err := streams.PriorityRange(f.Ctx, f.Dev)
		require.NoError(t, err)
		assert.LessOrEqual(t, greatest, least)
		hi := f.Stream(t, streams.Priority(greatest))
		assert.Equal(t, greatest, hi.Priority())
		lo := f.Stream(t, streams.Blocking())
		assert.Equal(t, least, lo.Priority())
		assert.True(t, lo.IsBlocking())
		_, err = streams.New(f.Ctx, f.Dev, streams.Priority(greatest-1))
		assert.ErrorIs(t, err, device.ErrInvalidArgument)
		require.NoError(t, hi.Synchronize(f.Ctx))
	})
}

func TestBadInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		other, err := device.Open(f.Ctx, 0, f.Opts...) // a distinct Device
		require.NoError(t, err)
		defer other.Close()
		s := f.Stream(t)
		foreignBuf, err := other.MallocBytes(f.Ctx, 64)
		require.NoError(t, err)
		foreignEv, err := streams.NewEvent(f.Ctx, other)
		require.NoError(t, err)
		mod, err := other.Compile(f.Ctx, device.Source{Name: "streams_test.cu", Code: testSource, Sim: testSim})
		require.NoError(t, err)
		foreignK, err := mod.Kernel(f.Ctx, "add_u32")
		require.NoError(t, err)
		buf := f.Buffer(t, 64)
		freed := f.Buffer(t, 64)
		require.NoError(t, freed.Close(f.Ctx))
		small := f.pinned(t, 8)
		cases := []struct {
			name string
			fut  func() *streams.Future
			want error
		}{
			{"buffer of another device", func() *streams.Future { return s.Memset(f.Ctx, foreignBuf, 0) }, device.ErrWrongDevice},
			{"kernel of another device", func() *streams.Future {
				return s.Launch(f.Ctx, foreignK, one(), buf, uint32(1), int32(1))
			}, device.ErrWrongDevice},
			{"event of another device", func() *streams.Future { return s.Record(f.Ctx, foreignEv) }, device.ErrWrongDevice},
			{"nil event", func() *streams.Future { return s.Wait(f.Ctx, nil) }, device.ErrInvalidArgument},
			{"nil host function", func() *streams.Future { return s.HostFunc(f.Ctx, nil) }, device.ErrInvalidArgument},
			{"freed buffer", func() *streams.Future { return s.Memset(f.Ctx, freed, 0) }, device.ErrClosed},
			{"pinned buffer too small", func() *streams.Future { return s.CopyHostToDevice(f.Ctx, buf, small) }, device.ErrOutOfRange},
			{"copy larger than its destination", func() *streams.Future { return s.Copy(f.Ctx, device.Range(buf, 0, 8), buf) }, device.ErrOutOfRange},
			{"wrong kernel arguments", func() *streams.Future { return s.Launch(f.Ctx, f.add, one(), buf) }, device.ErrKernelArgs},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				err := c.fut().Wait(f.Ctx)
				require.ErrorIs(t, err, c.want)
				require.NoError(t, s.Synchronize(f.Ctx), "the stream stays usable")
			})
		}
		_, err = streams.New(f.Ctx, nil)
		assert.ErrorIs(t, err, device.ErrInvalidArgument)
		_, err = streams.NewEvent(f.Ctx, f.Dev, streams.Interprocess)
		assert.ErrorIs(t, err, device.ErrInvalidArgument)
	})
}

func TestCancellation(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		cancelled, cancel := context.WithCancel(f.Ctx)
		cancel()
		err := s.Launch(cancelled, f.spin, one(), int64(1)).Wait(f.Ctx)
		assert.ErrorIs(t, err, context.Canceled, "never queued")

		// The kernel waits behind a host function that holds the stream until the waiter has
		// given up: it cannot complete first, however slowly the test goes.
		gate := make(chan struct{})
		s.HostFunc(f.Ctx, func() { <-gate })
		waitCtx, stop := context.WithTimeout(f.Ctx, 10*time.Millisecond)
		defer stop()
		slow := s.Launch(f.Ctx, f.spin, one(), spinCycles(10))
		assert.ErrorIs(t, slow.Wait(waitCtx), context.DeadlineExceeded, "the waiter stops at its deadline, before the kernel ends")
		assert.False(t, slow.Ready())
		close(gate)
		assert.NoError(t, slow.Wait(f.Ctx), "the operation itself still completes")
	})
}

func TestDeviceCloseSettlesStreams(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		dev, err := device.Open(f.Ctx, 0, f.Opts...)
		require.NoError(t, err)
		s, err := streams.New(f.Ctx, dev)
		require.NoError(t, err)
		_, err = streams.NewEvent(f.Ctx, dev)
		require.NoError(t, err)
		hf := s.HostFunc(f.Ctx, func() { time.Sleep(20 * time.Millisecond) })
		require.NoError(t, dev.Close())
		assert.True(t, hf.Ready(), "Close completes the futures of the work it waited for")
		err = s.HostFunc(f.Ctx, func() {}).Wait(f.Ctx)
		assert.ErrorIs(t, err, device.ErrClosed)
	})
}
