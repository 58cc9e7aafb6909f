package alloc_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testfix"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

const mib = 1 << 20

func newPool(t *testing.T, f *fixture, opts ...alloc.PoolOption) *alloc.Pool {
	t.Helper()
	p, err := alloc.NewPool(f.Ctx, f.Dev, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

func attrs(t *testing.T, f *fixture, p *alloc.Pool) alloc.PoolAttributes {
	t.Helper()
	a, err := p.Attributes(f.Ctx)
	require.NoError(t, err)
	return a
}

func TestPoolDefaults(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		def, err := alloc.DefaultPool(f.Ctx, f.Dev)
		require.NoError(t, err)
		require.True(t, def.IsDefault())
		cur, err := alloc.CurrentPool(f.Ctx, f.Dev)
		require.NoError(t, err)
		require.Same(t, def, cur)

		p := newPool(t, f, alloc.KeepUnused(3*mib))
		require.False(t, p.IsDefault())
		a := attrs(t, f, p)
		require.True(t, a.ReuseFollowEventDependencies)
		require.True(t, a.ReuseAllowOpportunistic)
		require.True(t, a.ReuseAllowInternalDependencies)
		require.Equal(t, uint64(3*mib), a.ReleaseThreshold)
		require.Zero(t, a.UsedCurrent)

		require.NoError(t, alloc.SetCurrentPool(f.Ctx, p))
		cur, err = alloc.CurrentPool(f.Ctx, f.Dev)
		require.NoError(t, err)
		require.Same(t, p, cur)
		// MallocAsync without FromPool now draws from p.
		s := f.Stream(t)
		b, _, err := alloc.MallocAsync[byte](f.Ctx, s, mib)
		require.NoError(t, err)
		require.GreaterOrEqual(t, attrs(t, f, p).UsedCurrent, uint64(mib))
		require.NoError(t, b.Close(f.Ctx))
		require.NoError(t, alloc.SetCurrentPool(f.Ctx, def))

		require.NoError(t, p.SetReuse(f.Ctx, alloc.ReusePolicy{FollowEventDependencies: true}))
		a = attrs(t, f, p)
		require.True(t, a.ReuseFollowEventDependencies)
		require.False(t, a.ReuseAllowOpportunistic)
		require.False(t, a.ReuseAllowInternalDependencies)
	})
}

// Memory freed on one stream is reused by another stream that waited on an event recorded
// after the free; with every reuse switch off it is not.
func TestPoolReuseAcrossStreams(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s1, s2 := f.Stream(t), f.Stream(t)
		ev, err := streams.NewEvent(f.Ctx, f.Dev)
		require.NoError(t, err)
		defer ev.Close(context.Background())

		p := newPool(t, f, alloc.KeepUnused(alloc.KeepAll))
		a, _, err := alloc.MallocAsync[float32](f.Ctx, s1, 1<<18, alloc.FromPool(p))
		require.NoError(t, err)
		ptr := ptrOf(t, a)
		a.CloseOn(f.Ctx, s1)
		rec := s1.Record(f.Ctx, ev)
		s2.Wait(f.Ctx, ev)
		testfix.Await(t, f.Ctx, rec)
		b, fut, err := alloc.MallocAsync[float32](f.Ctx, s2, 1<<18, alloc.FromPool(p))
		require.NoError(t, err)
		testfix.Await(t, f.Ctx, fut)
		require.Equal(t, ptr, ptrOf(t, b), "the block freed on s1 is reused on s2 after the event")
		require.NoError(t, b.Close(f.Ctx))

		q := newPool(t, f, alloc.KeepUnused(alloc.KeepAll))
		require.NoError(t, q.SetReuse(f.Ctx, alloc.ReusePolicy{}))
		c, _, err := alloc.MallocAsync[float32](f.Ctx, s1, 1<<18, alloc.FromPool(q))
		require.NoError(t, err)
		ptr = ptrOf(t, c)
		testfix.Await(t, f.Ctx, c.CloseOn(f.Ctx, s1))
		d, _, err := alloc.MallocAsync[float32](f.Ctx, s2, 1<<18, alloc.FromPool(q))
		require.NoError(t, err)
		require.NotEqual(t, ptr, ptrOf(t, d), "no reuse across streams with every reuse switch off")
		// The same stream always reuses: stream order makes it safe.
		e, _, err := alloc.MallocAsync[float32](f.Ctx, s1, 1<<18, alloc.FromPool(q))
		require.NoError(t, err)
		require.Equal(t, ptr, ptrOf(t, e))
		require.NoError(t, d.Close(f.Ctx))
		require.NoError(t, e.Close(f.Ctx))
	})
}

// Below the release threshold a pool keeps freed memory across a synchronization; above it the
// memory goes back to the device.
func TestPoolReleaseThreshold(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		for _, tc := range []struct {
			name      string
			threshold uint64
			kept      bool
		}{{"threshold 0", 0, false}, {"keep all", alloc.KeepAll, true}, {"threshold above", 64 * mib, true}} {
			t.Run(tc.name, func(t *testing.T) {
				p := newPool(t, f, alloc.KeepUnused(tc.threshold))
				b, _, err := alloc.MallocAsync[byte](f.Ctx, s, 8*mib, alloc.FromPool(p))
				require.NoError(t, err)
				require.GreaterOrEqual(t, attrs(t, f, p).ReservedCurrent, uint64(8*mib))
				require.NoError(t, b.Close(f.Ctx))
				require.NoError(t, f.Dev.Synchronize(f.Ctx))
				a := attrs(t, f, p)
				require.Zero(t, a.UsedCurrent)
				require.GreaterOrEqual(t, a.ReservedHigh, uint64(8*mib))
				if tc.kept {
					require.GreaterOrEqual(t, a.ReservedCurrent, uint64(8*mib))
				} else {
					require.Zero(t, a.ReservedCurrent)
				}
			})
		}
	})
}

func TestPoolTrim(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		p := newPool(t, f, alloc.KeepUnused(alloc.KeepAll))
		var bufs []*alloc.Buffer[byte]
		for range 4 {
			b, _, err := alloc.MallocAsync[byte](f.Ctx, s, 4*mib, alloc.FromPool(p))
			require.NoError(t, err)
			bufs = append(bufs, b)
		}
		for _, b := range bufs {
			b.CloseOn(f.Ctx, nil)
		}
		require.NoError(t, f.Dev.Synchronize(f.Ctx))
		require.GreaterOrEqual(t, attrs(t, f, p).ReservedCurrent, uint64(16*mib))
		require.NoError(t, p.TrimTo(f.Ctx, 0))
		require.Zero(t, attrs(t, f, p).ReservedCurrent)

		require.NoError(t, p.ResetHighWatermarks(f.Ctx))
		a := attrs(t, f, p)
		require.Zero(t, a.ReservedHigh)
		require.Zero(t, a.UsedHigh)
	})
}

// A pool with a maximum size refuses what does not fit, with the runtime's out-of-memory
// error, and the device goes on working.
func TestPoolMaxSizeOOM(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		p := newPool(t, f, alloc.MaxSize(64*mib))
		a, _, err := alloc.MallocAsync[byte](f.Ctx, s, 32*mib, alloc.FromPool(p))
		require.NoError(t, err)
		// The pool refuses it when the device runs it: the future and every use report it.
		b, fut, err := alloc.MallocAsync[byte](f.Ctx, s, 64*mib, alloc.FromPool(p))
		require.NoError(t, err)
		err = fut.Wait(f.Ctx)
		require.ErrorIs(t, err, cudaerr.MemoryAllocation)
		require.Equal(t, uint64(1), f.Dev.Stats().Memory.Async.Count, "the refused allocation is not counted")
		err = s.Memset(f.Ctx, b, 0).Wait(f.Ctx)
		require.ErrorIs(t, err, device.ErrAllocFailed)
		require.ErrorIs(t, err, cudaerr.MemoryAllocation)
		require.ErrorIs(t, b.Close(f.Ctx), device.ErrAllocFailed)
		require.NoError(t, a.Close(f.Ctx))
		requireStreamUsable(t, f, s)
	})
}

// device.WithMemoryLimit caps what gpuactor allocates on the device, of every device kind.
func TestMemoryLimit(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		u := f.Dev.Stats().Memory
		require.Equal(t, uint64(16*mib), u.Limit)
		a, _, err := alloc.MallocAsync[byte](f.Ctx, s, 10*mib)
		require.NoError(t, err)
		_, _, err = alloc.MallocAsync[byte](f.Ctx, s, 7*mib)
		require.ErrorIs(t, err, device.ErrMemoryLimit)
		_, err = f.Dev.MallocBytes(f.Ctx, 7*mib)
		require.ErrorIs(t, err, device.ErrMemoryLimit)
		_, err = alloc.MallocManaged[byte](f.Ctx, f.Dev, 7*mib)
		require.ErrorIs(t, err, device.ErrMemoryLimit)
		_, err = alloc.Malloc[byte](f.Ctx, s, 7*mib)
		require.ErrorIs(t, err, device.ErrMemoryLimit)
		b, err := f.Dev.MallocBytes(f.Ctx, 5*mib)
		require.NoError(t, err)
		u = f.Dev.Stats().Memory
		require.Equal(t, uint64(15*mib), u.DeviceBytes())
		require.NoError(t, a.Close(f.Ctx))
		require.NoError(t, b.Close(f.Ctx))
		require.Zero(t, f.Dev.Stats().Memory.DeviceBytes())
	}, device.WithMemoryLimit(16*mib))
}

// A pool's memory is its own device's until another is given access: every ordered pair of
// devices, each a few calls. Access can be given only to a device that can reach the pool's
// device (cudaMemPoolSetAccess needs a peer link); a pair without one is only asked.
func TestPoolAccess(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		devs := f.All(t)
		pools := make([]*alloc.Pool, len(devs))
		for i, d := range devs {
			a, err := alloc.NewPool(f.Ctx, d)
			require.NoError(t, err)
			t.Cleanup(func() { _ = a.Close(context.Background()) })
			pools[i] = a
			got, err := a.Access(f.Ctx, d)
			require.NoError(t, err)
			require.Equal(t, alloc.AccessReadWrite, got, "device %d's own pool", i)
		}
		for _, pr := range testdev.Pairs(len(devs)) {
			t.Run(fmt.Sprintf("%d-%d", pr[0], pr[1]), func(t *testing.T) {
				p, other := pools[pr[0]], devs[pr[1]]
				a, err := p.Access(f.Ctx, other)
				require.NoError(t, err)
				require.Equal(t, alloc.AccessNone, a)
				can, err := interop.CanAccessPeer(f.Ctx, other, devs[pr[0]])
				require.NoError(t, err)
				if !can {
					t.Logf("device %d cannot reach device %d: access not given", pr[1], pr[0])
					return
				}
				require.NoError(t, p.SetAccess(f.Ctx, other, alloc.AccessReadWrite))
				a, err = p.Access(f.Ctx, other)
				require.NoError(t, err)
				require.Equal(t, alloc.AccessReadWrite, a)
				require.NoError(t, p.SetAccess(f.Ctx, other, alloc.AccessNone))
				a, err = p.Access(f.Ctx, other)
				require.NoError(t, err)
				require.Equal(t, alloc.AccessNone, a)
			})
		}
	})
}

func TestPoolBadInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		ctx := f.Ctx
		s := f.Stream(t)
		def, err := alloc.DefaultPool(ctx, f.Dev)
		require.NoError(t, err)
		require.ErrorIs(t, def.Close(ctx), device.ErrInvalidArgument)
		p := newPool(t, f)
		require.ErrorIs(t, p.SetAccess(ctx, f.Dev, alloc.Access(1)), device.ErrInvalidArgument)
		require.ErrorIs(t, p.SetAccess(ctx, nil, alloc.AccessReadWrite), device.ErrInvalidArgument)
		b, _, err := alloc.MallocAsync[byte](ctx, s, mib, alloc.FromPool(p))
		require.NoError(t, err)
		require.NoError(t, alloc.SetCurrentPool(ctx, p))
		require.NoError(t, p.Close(ctx))
		require.True(t, p.Closed())
		cur, err := alloc.CurrentPool(ctx, f.Dev)
		require.NoError(t, err)
		require.True(t, cur.IsDefault(), "closing the current pool makes the default pool current")
		require.ErrorIs(t, p.Close(ctx), device.ErrClosed)
		require.ErrorIs(t, p.TrimTo(ctx, 0), device.ErrClosed)
		_, err = p.Attributes(ctx)
		require.ErrorIs(t, err, device.ErrClosed)
		require.ErrorIs(t, alloc.SetCurrentPool(ctx, p), device.ErrClosed)
		_, _, err = alloc.MallocAsync[byte](ctx, s, mib, alloc.FromPool(p))
		require.ErrorIs(t, err, device.ErrClosed)
		// Memory of a closed pool stays usable until freed.
		testfix.Await(t, ctx, s.Memset(ctx, b, 7))
		require.NoError(t, b.Close(ctx))
		var nilPool *alloc.Pool
		require.ErrorIs(t, nilPool.TrimTo(ctx, 0), device.ErrInvalidArgument)
		_, err = alloc.NewPool(ctx, nil)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		requireStreamUsable(t, f, s)
	})
}

// A stream of one device does not allocate from another's pool: every ordered pair.
func TestPoolOfAnotherDevice(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		devs := f.All(t)
		pools := make([]*alloc.Pool, len(devs))
		ss := make([]*streams.Stream, len(devs))
		for i, d := range devs {
			var err error
			pools[i], err = alloc.NewPool(f.Ctx, d)
			require.NoError(t, err)
			ss[i], err = streams.New(f.Ctx, d)
			require.NoError(t, err)
			defer ss[i].Close(context.Background())
		}
		for _, p := range testdev.Pairs(len(devs)) {
			_, _, err := alloc.MallocAsync[byte](f.Ctx, ss[p[0]], 64, alloc.FromPool(pools[p[1]]))
			require.ErrorIs(t, err, device.ErrWrongDevice, "device %d's stream, device %d's pool", p[0], p[1])
		}
		for _, q := range pools {
			require.NoError(t, q.Close(f.Ctx))
		}
	})
}

// Memory a stream-ordered buffer gave back to its pool stays there until a synchronization;
// a cudaMalloc (or managed allocation) that needs it trims the pools and gets it.
func TestPoolMemoryDoesNotStarveMalloc(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		free, _, err := f.Dev.MemInfo(f.Ctx)
		require.NoError(t, err)
		n := int(free / 4 * 3 / 4) // three quarters of what is free, in float32s
		b, made, err := alloc.MallocAsync[float32](f.Ctx, s, n)
		require.NoError(t, err)
		require.NoError(t, made.Wait(f.Ctx))
		require.NoError(t, b.CloseOn(f.Ctx, nil).Wait(f.Ctx)) // back into the default pool
		c, err := f.Dev.MallocBytes(f.Ctx, uint64(n)*4)
		require.NoError(t, err, "the pool's unused memory was given back for it")
		require.NoError(t, c.Close(f.Ctx))
		if f.Dev.Properties().ManagedMemory {
			b, made, err = alloc.MallocAsync[float32](f.Ctx, s, n)
			require.NoError(t, err)
			require.NoError(t, made.Wait(f.Ctx))
			require.NoError(t, b.CloseOn(f.Ctx, nil).Wait(f.Ctx))
			m, err := alloc.MallocManaged[float32](f.Ctx, f.Dev, n)
			require.NoError(t, err, "and for managed memory")
			require.NoError(t, m.Close(f.Ctx))
		}
	}, device.WithSimulator(sim.New(sim.WithMemory(256<<20))))
}

// A stream that freed and was then closed is not synchronized by the next Synchronize: its
// handle is gone (the runtime would fail the call, or reach a stream that reuses the handle).
func TestSynchronizeAfterAFreeingStreamClosed(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		for range 3 {
			s, err := streams.New(f.Ctx, f.Dev)
			require.NoError(t, err)
			b, _, err := alloc.MallocAsync[byte](f.Ctx, s, mib)
			require.NoError(t, err)
			require.NoError(t, b.Close(f.Ctx))
			require.NoError(t, s.Close(f.Ctx))
		}
		require.NoError(t, f.Dev.Synchronize(f.Ctx))
	})
}
