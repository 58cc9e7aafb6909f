package graphs_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

const n = 1000

// pipeline: x = (x + 3) * 5 + 1, then copied to out.
func TestCapturedAndExplicitGraphsAgree(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)

		// Explicit.
		a, aOut := f.buffer(t, n), f.buffer(t, n)
		g := f.graph(t)
		set, err := g.AddMemset(f.Ctx, nil, a, 0)
		require.NoError(t, err)
		add, err := g.AddKernel(f.Ctx, graphs.After(set), f.add, cfg(n), a, uint32(3), int32(n))
		require.NoError(t, err)
		mul, err := g.AddKernel(f.Ctx, graphs.After(add), f.mul, cfg(n), a, uint32(5), int32(n))
		require.NoError(t, err)
		inc, err := g.AddKernel(f.Ctx, graphs.After(mul), f.add, cfg(n), a, uint32(1), int32(n))
		require.NoError(t, err)
		_, err = g.AddCopy(f.Ctx, graphs.After(inc), aOut, a)
		require.NoError(t, err)

		// Captured.
		b, bOut := f.buffer(t, n), f.buffer(t, n)
		cg, err := graphs.Capture(f.Ctx, s, func(ctx context.Context) error {
			s.Memset(ctx, b, 0)
			s.Launch(ctx, f.add, cfg(n), b, uint32(3), int32(n))
			s.Launch(ctx, f.mul, cfg(n), b, uint32(5), int32(n))
			s.Launch(ctx, f.add, cfg(n), b, uint32(1), int32(n))
			_, err := s.Copy(ctx, bOut, b).Await(ctx) // completes at once: captured, not run
			return err
		})
		require.NoError(t, err)
		st, err := graphs.Status(f.Ctx, s)
		require.NoError(t, err)
		assert.False(t, st.Active, "the stream is no longer capturing")
		assert.Equal(t, testdev.Filled(n, 0), f.read(t, bOut), "captured work did not run")

		for _, gr := range []*graphs.Graph{g, cg} {
			d, err := gr.Describe(f.Ctx)
			require.NoError(t, err)
			assert.Equal(t, 3, d.Count(graphs.KernelNode), d.String())
			assert.Equal(t, 1, d.Count(graphs.MemsetNode), d.String())
			assert.Equal(t, 1, d.Count(graphs.CopyNode), d.String())
			for i, nd := range d.Nodes[1:] {
				assert.Equal(t, []int{i}, nd.Deps, "a chain: %s", d)
			}
		}
		xa, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		xb, err := cg.Instantiate(f.Ctx)
		require.NoError(t, err)
		for range 3 { // idempotent pipeline: every launch gives the same result
			f.launch(t, xa, s)
			f.launch(t, xb, s)
		}
		assert.Equal(t, testdev.Filled(n, 16), f.read(t, aOut))
		assert.Equal(t, f.read(t, aOut), f.read(t, bOut))
	})
}

func TestForkJoinCapture(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s1, s2 := f.Stream(t), f.Stream(t)
		fork, err := streams.NewEvent(f.Ctx, f.Dev, streams.DisableTiming)
		require.NoError(t, err)
		join, err := streams.NewEvent(f.Ctx, f.Dev, streams.DisableTiming)
		require.NoError(t, err)
		a, b := f.buffer(t, n), f.buffer(t, n)
		testdev.Write(t, f.Ctx, a, testdev.Filled(n, 1))
		testdev.Write(t, f.Ctx, b, testdev.Filled(n, 1))
		g, err := graphs.Capture(f.Ctx, s1, func(ctx context.Context) error {
			s1.Record(ctx, fork)
			s2.Wait(ctx, fork) // s2 joins the capture
			s1.Launch(ctx, f.add, cfg(n), a, uint32(1), int32(n))
			s2.Launch(ctx, f.mul, cfg(n), b, uint32(7), int32(n))
			s2.Record(ctx, join)
			_, err := s1.Wait(ctx, join).Await(ctx)
			return err
		})
		require.NoError(t, err)
		d, err := g.Describe(f.Ctx)
		require.NoError(t, err)
		require.Equal(t, 2, d.Count(graphs.KernelNode), d.String())
		roots, err := g.Roots(f.Ctx)
		require.NoError(t, err)
		assert.Len(t, roots, 2, "the two launches are independent: %s", d)
		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		f.launch(t, x, s1)
		assert.Equal(t, testdev.Filled(n, 2), f.read(t, a))
		assert.Equal(t, testdev.Filled(n, 7), f.read(t, b))
	})
}

func TestUnjoinedForkFailsTheCapture(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s1, s2 := f.Stream(t), f.Stream(t)
		ev, err := streams.NewEvent(f.Ctx, f.Dev, streams.DisableTiming)
		require.NoError(t, err)
		a := f.buffer(t, n)
		_, err = graphs.Capture(f.Ctx, s1, func(ctx context.Context) error {
			s1.Record(ctx, ev)
			s2.Wait(ctx, ev)
			_, err := s2.Launch(ctx, f.add, cfg(n), a, uint32(1), int32(n)).Await(ctx)
			return err
		})
		require.ErrorIs(t, err, graphs.ErrCapture)
		assert.ErrorIs(t, err, cudaerr.StreamCaptureUnjoined)
		for _, s := range []*streams.Stream{s1, s2} { // both usable again
			_, err = s.Launch(f.Ctx, f.add, cfg(n), a, uint32(1), int32(n)).Await(f.Ctx)
			require.NoError(t, err)
		}
	})
}

func TestQueryInsideACaptureInvalidatesIt(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		a := f.buffer(t, n)
		c, err := graphs.BeginCapture(f.Ctx, s)
		require.NoError(t, err)
		s.Launch(f.Ctx, f.add, cfg(n), a, uint32(1), int32(n))
		_, err = s.Query(f.Ctx)
		require.Error(t, err, "querying a capturing stream is refused")
		st, err := graphs.Status(f.Ctx, s)
		require.NoError(t, err)
		assert.True(t, st.Invalidated)
		_, err = c.End(f.Ctx)
		require.ErrorIs(t, err, graphs.ErrCapture)
		require.ErrorIs(t, err, cudaerr.StreamCaptureInvalidated)
		_, err = s.Launch(f.Ctx, f.add, cfg(n), a, uint32(1), int32(n)).Await(f.Ctx)
		require.NoError(t, err, "the stream works after a failed capture")
		assert.Equal(t, testdev.Filled(n, 1), f.read(t, a))
	})
}

// Synchronizing a capturing stream has nothing to wait for: it fails, as
// cudaStreamSynchronize does, and invalidates the capture; the stream works afterwards.
func TestSynchronizeInsideACaptureInvalidatesIt(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		a := f.buffer(t, n)
		c, err := graphs.BeginCapture(f.Ctx, s)
		require.NoError(t, err)
		s.Launch(f.Ctx, f.add, cfg(n), a, uint32(1), int32(n))
		err = s.Synchronize(f.Ctx)
		require.ErrorIs(t, err, cudaerr.StreamCaptureUnsupported, "nothing ran: no success to report")
		_, err = c.End(f.Ctx)
		require.ErrorIs(t, err, cudaerr.StreamCaptureInvalidated)
		require.NoError(t, s.Launch(f.Ctx, f.add, cfg(n), a, uint32(1), int32(n)).Wait(f.Ctx))
		require.NoError(t, s.Synchronize(f.Ctx))
		assert.Equal(t, testdev.Filled(n, 1), f.read(t, a))
	})
}

func TestCaptureEndsWhenTheCallerFails(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		a := f.buffer(t, n)
		ctx, cancel := context.WithCancel(f.Ctx)
		boom := errors.New("boom")
		_, err := graphs.Capture(ctx, s, func(ctx context.Context) error {
			s.Launch(ctx, f.add, cfg(n), a, uint32(1), int32(n))
			cancel()
			return boom
		})
		require.ErrorIs(t, err, boom)
		st, err := graphs.Status(f.Ctx, s)
		require.NoError(t, err)
		assert.False(t, st.Active, "the capture was ended")
		assert.Panics(t, func() {
			_, _ = graphs.Capture(f.Ctx, s, func(ctx context.Context) error { panic("fn panicked") })
		})
		st, err = graphs.Status(f.Ctx, s)
		require.NoError(t, err)
		assert.False(t, st.Active, "a panic ends the capture too")

		// A context that ends before the capture begins: none is left open either.
		dead, cancelDead := context.WithCancel(f.Ctx)
		cancelDead()
		_, err = graphs.BeginCapture(dead, s)
		require.ErrorIs(t, err, context.Canceled)
		require.Eventually(t, func() bool {
			st, err := graphs.Status(f.Ctx, s)
			return err == nil && !st.Active
		}, 5e9, 1e6)
		_, err = s.Launch(f.Ctx, f.add, cfg(n), a, uint32(1), int32(n)).Await(f.Ctx)
		require.NoError(t, err)
		require.NoError(t, s.Synchronize(f.Ctx))
		assert.Equal(t, testdev.Filled(n, 1), f.read(t, a), "only the launch outside the captures ran")
	})
}

func TestCaptureModes(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		for _, m := range []graphs.Mode{graphs.Global, graphs.ThreadLocal, graphs.Relaxed} {
			t.Run(m.String(), func(t *testing.T) {
				s, other := f.Stream(t), f.Stream(t)
				a, b := f.buffer(t, n), f.buffer(t, n)
				// Work on another stream before and during the capture still completes.
				busy := other.Launch(f.Ctx, f.add, cfg(n), b, uint32(1), int32(n))
				// So does work queued on the capturing stream just before.
				pre := s.Launch(f.Ctx, f.add, cfg(n), a, uint32(100), int32(n))
				g, err := graphs.Capture(f.Ctx, s, func(ctx context.Context) error {
					_, err := s.Launch(ctx, f.add, cfg(n), a, uint32(2), int32(n)).Await(ctx)
					return err
				}, graphs.WithMode(m))
				require.NoError(t, err)
				_, err = busy.Await(f.Ctx)
				require.NoError(t, err)
				_, err = pre.Await(f.Ctx)
				require.NoError(t, err)
				x, err := g.Instantiate(f.Ctx)
				require.NoError(t, err)
				f.launch(t, x, s)
				assert.Equal(t, testdev.Filled(n, 102), f.read(t, a))
				assert.Equal(t, testdev.Filled(n, 1), f.read(t, b))
			})
		}
	})
}

func TestKernelArgUpdatesTakeEffect(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		a, b := f.buffer(t, n), f.buffer(t, n)
		g := f.graph(t)
		k, err := g.AddKernel(f.Ctx, nil, f.add, cfg(n), a, uint32(1), int32(n))
		require.NoError(t, err)
		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		f.launch(t, x, s)
		require.NoError(t, x.SetKernelArgs(f.Ctx, k, b, uint32(10), int32(n)))
		f.launch(t, x, s)
		f.launch(t, x, s)
		assert.Equal(t, testdev.Filled(n, 1), f.read(t, a))
		assert.Equal(t, testdev.Filled(n, 20), f.read(t, b))
		require.NoError(t, x.SetKernel(f.Ctx, k, f.mul, cfg(n), b, uint32(3), int32(n)))
		f.launch(t, x, s)
		assert.Equal(t, testdev.Filled(n, 60), f.read(t, b))

		require.NoError(t, x.SetEnabled(f.Ctx, k, false))
		f.launch(t, x, s)
		assert.Equal(t, testdev.Filled(n, 60), f.read(t, b), "disabled")
		require.NoError(t, x.SetEnabled(f.Ctx, k, true))
		f.launch(t, x, s)
		assert.Equal(t, testdev.Filled(n, 180), f.read(t, b), "enabled again")

		err = x.SetKernelArgs(f.Ctx, k, b, "three", int32(n))
		require.ErrorIs(t, err, device.ErrKernelArgs)
		f.launch(t, x, s)
		assert.Equal(t, testdev.Filled(n, 540), f.read(t, b), "a refused update changes nothing")
	})
}

func TestWholeGraphUpdate(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		a := f.buffer(t, n)
		build := func(v uint32, extra bool) *graphs.Graph {
			g := f.graph(t)
			first, err := g.AddKernel(f.Ctx, nil, f.add, cfg(n), a, v, int32(n))
			require.NoError(t, err)
			_, err = g.AddKernel(f.Ctx, graphs.After(first), f.add, cfg(n), a, v, int32(n))
			require.NoError(t, err)
			if extra {
				_, err = g.AddMemset(f.Ctx, graphs.After(first), a, 0)
				require.NoError(t, err)
			}
			return g
		}
		x, err := build(1, false).Instantiate(f.Ctx)
		require.NoError(t, err)
		f.launch(t, x, s)
		assert.Equal(t, testdev.Filled(n, 2), f.read(t, a))

		require.NoError(t, x.Update(f.Ctx, build(5, false)))
		f.launch(t, x, s)
		assert.Equal(t, testdev.Filled(n, 12), f.read(t, a), "the update took effect")

		err = x.Update(f.Ctx, build(100, true))
		var ue *graphs.UpdateError
		require.ErrorAs(t, err, &ue)
		assert.ErrorIs(t, err, cudaerr.GraphExecUpdateFailure)
		assert.Contains(t, ue.Error(), "topology")
		f.launch(t, x, s)
		assert.Equal(t, testdev.Filled(n, 22), f.read(t, a), "a refused update changes nothing")
	})
}

func TestMemoryNodes(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		out := f.buffer(t, n)
		g := f.graph(t)
		alloc, p, err := g.AddAlloc(f.Ctx, nil, 4*n)
		require.NoError(t, err)
		require.NotZero(t, p)
		// tmp = tmp*0 + 9, then out += tmp: the fresh memory is usable by kernels.
		zero, err := g.AddKernel(f.Ctx, graphs.After(alloc), f.mul, cfg(n), p, uint32(0), int32(n))
		require.NoError(t, err)
		nine, err := g.AddKernel(f.Ctx, graphs.After(zero), f.add, cfg(n), p, uint32(9), int32(n))
		require.NoError(t, err)
		acc, err := g.AddKernel(f.Ctx, graphs.After(nine), f.acc, cfg(n), out, p, int32(n))
		require.NoError(t, err)
		_, err = g.AddFree(f.Ctx, graphs.After(acc), p)
		require.NoError(t, err)

		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		for range 3 {
			f.launch(t, x, s) // the free node releases the memory: relaunching works
		}
		assert.Equal(t, testdev.Filled(n, 27), f.read(t, out))

		// Without a free node the next launch is refused, unless AutoFreeOnLaunch.
		leak, lx, p2 := f.leaky(t, nil)
		f.launch(t, lx, s)
		_, err = lx.Launch(f.Ctx, s).Await(f.Ctx)
		require.Error(t, err, "the first launch's allocation is still live")
		require.NoError(t, s.Synchronize(f.Ctx))
		fx := f.freeing(t, p2) // another graph may free it
		f.launch(t, fx, s)
		f.launch(t, lx, s) // allowed again
		f.launch(t, fx, s)

		auto := f.graph(t)
		a3, p3, err := auto.AddAlloc(f.Ctx, nil, 4*n)
		require.NoError(t, err)
		_, err = auto.AddKernel(f.Ctx, graphs.After(a3), f.add, cfg(n), p3, uint32(1), int32(n))
		require.NoError(t, err)
		ax, err := auto.Instantiate(f.Ctx, graphs.AutoFreeOnLaunch())
		require.NoError(t, err)
		for range 3 {
			f.launch(t, ax, s)
		}
		require.NoError(t, ax.Close(f.Ctx))
		require.NoError(t, leak.Close(f.Ctx))
		require.NoError(t, f.Dev.Synchronize(f.Ctx), "the device is fine after the refused launch")
	})
}

func TestStagedCopiesHostNodesAndChildren(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		a := f.buffer(t, n)
		child := f.graph(t)
		_, err := child.AddKernel(f.Ctx, nil, f.mul, cfg(n), a, uint32(2), int32(n))
		require.NoError(t, err)

		g := f.graph(t)
		up, in, err := graphs.AddUpload(f.Ctx, g, nil, a, testdev.Filled(n, 4))
		require.NoError(t, err)
		ch, err := g.AddChild(f.Ctx, graphs.After(up), child)
		require.NoError(t, err)
		e, err := g.AddEmpty(f.Ctx, graphs.After(ch))
		require.NoError(t, err)
		var ran atomic.Int32
		var seen []uint32
		down, out, err := graphs.AddDownload[uint32](f.Ctx, g, graphs.After(e), a)
		require.NoError(t, err)
		_, err = g.AddHost(f.Ctx, graphs.After(down), func() {
			ran.Add(1)
			seen = append([]uint32(nil), out.Host()[:3]...)
		})
		require.NoError(t, err)
		require.NoError(t, child.Close(f.Ctx), "the child node is a copy")

		x, err := g.Instantiate(f.Ctx, graphs.Upload(s))
		require.NoError(t, err)
		f.launch(t, x, s)
		assert.Equal(t, testdev.Filled(n, 8), out.Host())
		assert.Equal(t, []uint32{8, 8, 8}, seen, "the host node ran after the download")
		copy(in.Host(), testdev.Filled(n, 10))
		f.launch(t, x, s)
		assert.Equal(t, testdev.Filled(n, 20), out.Host())
		assert.Equal(t, int32(2), ran.Load(), "once per launch")

		clone, err := g.Clone(f.Ctx)
		require.NoError(t, err)
		require.NoError(t, g.Close(f.Ctx), "the exec and the clone keep the staging memory")
		cx, err := clone.Instantiate(f.Ctx)
		require.NoError(t, err)
		f.launch(t, x, s)
		f.launch(t, cx, s)
		assert.Equal(t, testdev.Filled(n, 20), out.Host())
		assert.Equal(t, int32(4), ran.Load())
	})
}

func TestEventNodes(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s, other := f.Stream(t), f.Stream(t)
		ev, err := streams.NewEvent(f.Ctx, f.Dev)
		require.NoError(t, err)
		a := f.buffer(t, n)
		g := f.graph(t)
		k, err := g.AddKernel(f.Ctx, nil, f.add, cfg(n), a, uint32(3), int32(n))
		require.NoError(t, err)
		_, err = g.AddEventRecord(f.Ctx, graphs.After(k), ev)
		require.NoError(t, err)
		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		x.Launch(f.Ctx, s)
		other.Wait(f.Ctx, ev)
		_, err = other.Launch(f.Ctx, f.mul, cfg(n), a, uint32(2), int32(n)).Await(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, testdev.Filled(n, 6), f.read(t, a), "the wait ordered the mul after the graph's add")

		w := f.graph(t)
		wait, err := w.AddEventWait(f.Ctx, nil, ev)
		require.NoError(t, err)
		_, err = w.AddKernel(f.Ctx, graphs.After(wait), f.add, cfg(n), a, uint32(1), int32(n))
		require.NoError(t, err)
		wx, err := w.Instantiate(f.Ctx)
		require.NoError(t, err)
		f.launch(t, wx, other)
		assert.Equal(t, testdev.Filled(n, 7), f.read(t, a))
	})
}

func TestHostNodePanicFailsTheLaunch(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		g := f.graph(t)
		_, err := g.AddHost(f.Ctx, nil, func() { panic("host node") })
		require.NoError(t, err)
		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		_, err = x.Launch(f.Ctx, s).Await(f.Ctx)
		var pe *actor.PanicError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "host node", pe.Value)
		require.NoError(t, s.Synchronize(f.Ctx), "the stream goes on")
	})
}

// A graph with host nodes reports their panics through the tracker's completion, not a
// goroutine per launch: launches queued behind a held stream add no goroutines, every one
// completes, and exactly one reports the panic (launches complete in batches, so it may be one
// that completed with the run that panicked rather than that run's own).
func TestHostNodeLaunchesNeedNoGoroutines(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		g := f.graph(t)
		var runs atomic.Int32
		_, err := g.AddHost(f.Ctx, nil, func() {
			if runs.Add(1) == 3 {
				panic("third run")
			}
		})
		require.NoError(t, err)
		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		gate := make(chan struct{})
		s.HostFunc(f.Ctx, func() { <-gate })
		before := runtime.NumGoroutine()
		const launches = 200
		futs := make([]*streams.Future, launches)
		for i := range futs {
			futs[i] = x.Launch(f.Ctx, s)
		}
		assert.Less(t, runtime.NumGoroutine()-before, launches/4, "no goroutine per launch")
		close(gate)
		reported := 0
		for i, fut := range futs {
			_, err := fut.Await(f.Ctx)
			if err == nil {
				continue
			}
			var pe *actor.PanicError
			require.ErrorAs(t, err, &pe, "launch %d", i)
			assert.Equal(t, "third run", pe.Value)
			assert.LessOrEqual(t, i, 2, "reported no later than by the launch that panicked")
			reported++
		}
		assert.Equal(t, 1, reported, "the panic is reported once")
		assert.Equal(t, int32(launches), runs.Load())
	})
}

func TestRecordAndReplayWithNewArguments(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		scratch := f.buffer(t, n)
		var addSlot, mulSlot graphs.Slot
		var hostRuns atomic.Int32
		tpl, err := graphs.Record(f.Ctx, s, func(ctx context.Context, r *graphs.Recorder) error {
			var err error
			if addSlot, err = r.Launch(ctx, f.add, cfg(n), scratch, uint32(1), int32(n)); err != nil {
				return err
			}
			if mulSlot, err = r.Launch(ctx, f.mul, cfg(n), scratch, uint32(1), int32(n)); err != nil {
				return err
			}
			return r.HostFunc(ctx, func() { hostRuns.Add(1) })
		})
		require.NoError(t, err)
		require.Equal(t, 2, tpl.Slots())
		assert.Equal(t, testdev.Filled(n, 0), f.read(t, scratch), "recording runs nothing")

		// Many requests, concurrently, each with its own buffer and numbers.
		const requests = 8
		bufs := make([]*device.Buffer, requests)
		for i := range bufs {
			bufs[i] = f.buffer(t, n)
			testdev.Write(t, f.Ctx, bufs[i], testdev.Filled(n, uint32(i)))
		}
		var wg sync.WaitGroup
		for i := range requests {
			wg.Go(func() {
				rs, err := streams.New(f.Ctx, f.Dev)
				if !assert.NoError(t, err) {
					return
				}
				defer func() { assert.NoError(t, rs.Close(context.Background())) }()
				_, err = tpl.Launch(f.Ctx, rs,
					graphs.Args(addSlot, bufs[i], uint32(i+1), int32(n)),
					graphs.Args(mulSlot, bufs[i], uint32(3), int32(n))).Await(f.Ctx)
				assert.NoError(t, err)
			})
		}
		wg.Wait()
		for i := range requests {
			assert.Equal(t, testdev.Filled(n, uint32(3*(2*i+1))), f.read(t, bufs[i]), "request %d", i)
		}
		assert.Equal(t, int32(requests), hostRuns.Load())

		_, err = tpl.Launch(f.Ctx, s, graphs.Args(7, scratch)).Await(f.Ctx)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, err = tpl.Launch(f.Ctx, s, graphs.Args(addSlot, scratch, 1.5, int32(n))).Await(f.Ctx)
		require.ErrorIs(t, err, device.ErrKernelArgs)
		require.NoError(t, tpl.Close(f.Ctx))
		_, err = tpl.Launch(f.Ctx, s).Await(f.Ctx)
		require.ErrorIs(t, err, device.ErrClosed)
	})
}

func TestDescribeAndDOT(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		a := f.buffer(t, n)
		g := f.graph(t)
		r1, err := g.AddMemset(f.Ctx, nil, a, 0)
		require.NoError(t, err)
		r2, err := g.AddEmpty(f.Ctx, nil)
		require.NoError(t, err)
		k, err := g.AddKernel(f.Ctx, graphs.After(r1, r2), f.add, cfg(n), a, uint32(1), int32(n))
		require.NoError(t, err)
		e, err := g.AddEmpty(f.Ctx, nil)
		require.NoError(t, err)
		require.NoError(t, g.Depend(f.Ctx, k, e))
		d, err := g.Describe(f.Ctx)
		require.NoError(t, err)
		require.Len(t, d.Nodes, 4, d.String())
		assert.Equal(t, graphs.EmptyNode, d.Nodes[3].Kind)
		assert.Contains(t, d.String(), "kernel add_u32 <- ")
		edges, err := g.Edges(f.Ctx)
		require.NoError(t, err)
		assert.Len(t, edges, 3)
		nodes, err := g.Nodes(f.Ctx)
		require.NoError(t, err)
		assert.Contains(t, nodes, k)
		dot, err := g.DOT(f.Ctx)
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(dot, "digraph"), dot)
		assert.Contains(t, dot, "->")
	})
}

func TestBadInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		a := f.buffer(t, n)
		g, h := f.graph(t), f.graph(t)
		k, err := g.AddKernel(f.Ctx, nil, f.add, cfg(n), a, uint32(1), int32(n))
		require.NoError(t, err)
		_, err = h.AddEmpty(f.Ctx, graphs.After(k))
		require.ErrorIs(t, err, graphs.ErrForeignNode, "a dependency from another graph")
		require.ErrorIs(t, h.Depend(f.Ctx, k, k), graphs.ErrForeignNode)
		_, err = g.AddKernel(f.Ctx, graphs.After(nil), f.add, cfg(n), a, uint32(1), int32(n))
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, err = g.AddKernel(f.Ctx, nil, f.add, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(4096)}, a, uint32(1), int32(n))
		require.ErrorIs(t, err, device.ErrLaunchConfig)
		_, err = g.AddMemset(f.Ctx, nil, device.Range(a, 0, 8*n), 0)
		require.ErrorIs(t, err, device.ErrOutOfRange)
		_, err = g.AddHost(f.Ctx, nil, nil)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, err = g.AddChild(f.Ctx, nil, g)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		p, err := a.DevicePtr(f.Ctx)
		require.NoError(t, err)
		_, err = g.AddFree(f.Ctx, nil, p+4)
		require.Error(t, err, "freeing memory that no allocation node made")

		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		hk, err := h.AddKernel(f.Ctx, nil, f.add, cfg(n), a, uint32(1), int32(n))
		require.NoError(t, err)
		require.ErrorIs(t, x.SetKernelArgs(f.Ctx, hk, a, uint32(2), int32(n)), graphs.ErrForeignNode)
		e, err := h.AddEmpty(f.Ctx, nil)
		require.NoError(t, err)
		require.ErrorIs(t, x.SetEnabled(f.Ctx, e, false), graphs.ErrForeignNode)
		require.Error(t, x.SetKernelArgs(f.Ctx, nil), "nil node")

		require.NoError(t, x.Close(f.Ctx))
		_, err = x.Launch(f.Ctx, s).Await(f.Ctx)
		require.ErrorIs(t, err, device.ErrClosed, "launching a destroyed graph")
		require.ErrorIs(t, x.Close(f.Ctx), device.ErrClosed)
		require.NoError(t, g.Close(f.Ctx))
		_, err = g.AddEmpty(f.Ctx, nil)
		require.ErrorIs(t, err, device.ErrClosed)
		_, err = g.Instantiate(f.Ctx)
		require.ErrorIs(t, err, device.ErrClosed)
		_, err = graphs.Capture(f.Ctx, s, nil)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, err = graphs.BeginCapture(f.Ctx, s, graphs.WithMode(42))
		require.ErrorIs(t, err, device.ErrInvalidArgument)

		// Capturing twice on one stream.
		c, err := graphs.BeginCapture(f.Ctx, s)
		require.NoError(t, err)
		_, err = graphs.BeginCapture(f.Ctx, s)
		require.ErrorIs(t, err, graphs.ErrCapture)
		require.NoError(t, c.Abort(f.Ctx))

		// The device is fine after all that.
		_, err = s.Launch(f.Ctx, f.add, cfg(n), a, uint32(1), int32(n)).Await(f.Ctx)
		require.NoError(t, err)
	})
}

// TestOtherDevice: a graph of one device is refused by another's streams, graphs and
// captures, for every ordered pair of devices (each pair is a few calls that fail before
// anything reaches a GPU).
func TestOtherDevice(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		devs := testdev.All(t, f.Ctx, f.Opts, f.Dev)
		type side struct {
			s     *streams.Stream
			add   *device.Kernel
			a     *device.Buffer
			g     *graphs.Graph // holds a kernel node of add on a
			x     *graphs.Exec  // g's
			empty *graphs.Graph
		}
		sides := make([]side, len(devs))
		for i, d := range devs {
			sd := &sides[i]
			var err error
			sd.add = f.add
			if d != f.Dev {
				sd.add, _, _ = f.kernels(t, d)
			}
			sd.s, err = streams.New(f.Ctx, d)
			require.NoError(t, err)
			b, err := d.MallocBytes(f.Ctx, 4*n)
			require.NoError(t, err)
			sd.a = b
			sd.g, err = graphs.New(f.Ctx, d)
			require.NoError(t, err)
			_, err = sd.g.AddKernel(f.Ctx, nil, sd.add, cfg(n), sd.a, uint32(1), int32(n))
			require.NoError(t, err)
			sd.x, err = sd.g.Instantiate(f.Ctx)
			require.NoError(t, err)
			sd.empty, err = graphs.New(f.Ctx, d)
			require.NoError(t, err)
		}
		for _, p := range testdev.Pairs(len(devs)) {
			t.Run(fmt.Sprintf("%d-%d", p[0], p[1]), func(t *testing.T) {
				home, other := sides[p[0]], sides[p[1]]
				_, err := home.x.Launch(f.Ctx, other.s).Await(f.Ctx)
				require.ErrorIs(t, err, device.ErrWrongDevice, "launching on a stream of another device")
				_, err = home.g.Instantiate(f.Ctx, graphs.Upload(other.s))
				require.ErrorIs(t, err, device.ErrWrongDevice)
				_, err = home.g.AddChild(f.Ctx, nil, other.empty)
				require.ErrorIs(t, err, device.ErrWrongDevice)
				require.ErrorIs(t, home.x.Update(f.Ctx, other.empty), device.ErrWrongDevice)
				// Capturing on the other device's stream work that uses this device's kernel
				// fails, and the capture is discarded.
				_, err = graphs.Capture(f.Ctx, other.s, func(ctx context.Context) error {
					_, err := other.s.Launch(ctx, home.add, cfg(n), home.a, uint32(1), int32(n)).Await(ctx)
					return err
				})
				require.ErrorIs(t, err, device.ErrWrongDevice)
				st, err := graphs.Status(f.Ctx, other.s)
				require.NoError(t, err)
				assert.False(t, st.Active)
			})
		}
		// Every graph still launches on its own device's stream.
		for i, sd := range sides {
			_, err := sd.x.Launch(f.Ctx, sd.s).Await(f.Ctx)
			require.NoError(t, err, "device %d", i)
			require.NoError(t, sd.s.Close(f.Ctx))
		}
	})
}

// Resources shared or held both ways never deadlock a launch: an Exec updated from a clone of
// its own graph (they share resources), many times over, and two graphs each made the other's
// child. A host node's panic is still reported through them.
func TestHeldResourcesFormCycles(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		g := f.graph(t)
		var runs atomic.Int32
		_, err := g.AddHost(f.Ctx, nil, func() {
			if runs.Add(1) == 4 {
				panic("fourth run")
			}
		})
		require.NoError(t, err)
		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		for range 3 {
			clone, err := g.Clone(f.Ctx)
			require.NoError(t, err)
			require.NoError(t, x.Update(f.Ctx, clone))
			require.NoError(t, x.Update(f.Ctx, g))
			f.launch(t, x, s)
		}
		_, err = x.Launch(f.Ctx, s).Await(f.Ctx)
		var pe *actor.PanicError
		require.ErrorAs(t, err, &pe, "the host node panicked on its fourth run")
		f.launch(t, x, s)

		a, b := f.graph(t), f.graph(t)
		_, err = a.AddEmpty(f.Ctx, nil)
		require.NoError(t, err)
		_, err = b.AddChild(f.Ctx, nil, a)
		require.NoError(t, err)
		_, err = a.AddChild(f.Ctx, nil, b)
		require.NoError(t, err)
		xa, err := a.Instantiate(f.Ctx)
		require.NoError(t, err)
		xb, err := b.Instantiate(f.Ctx)
		require.NoError(t, err)
		f.launch(t, xa, s)
		f.launch(t, xb, s)
	})
}
