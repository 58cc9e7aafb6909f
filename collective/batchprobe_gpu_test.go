package collective

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// TestGPUAllReduceBatchProbe splits a batch of all-reduces in one process into where its time
// goes, for the small sizes where the bandwidth rows trail the C++ loop: per batch, the wall
// time from the first call to the last future's completion; when each rank's actor had issued
// its last NCCL call (a marker message queued after the batch, which the actor runs in
// order); and the GPU's span of the batch on each rank (events recorded around it). Two ways
// of issuing: seq (one goroutine alternating ranks, as the rows do) and perrank (a goroutine
// per rank, released together, as all_reduce_perf -t does). Opt-in:
//
//	GPUACTOR_COLL_PROBE=1 go test ./collective -run GPUAllReduceBatchProbe -v
func TestGPUAllReduceBatchProbe(t *testing.T) {
	if os.Getenv("GPUACTOR_COLL_PROBE") != "1" {
		t.Skip("set GPUACTOR_COLL_PROBE=1 to measure")
	}
	ctx := context.Background()
	devs, ss := cudaRanks(t, ctx, 2, bwTuning)
	devs, ss = devs[:2], ss[:2]
	comms, err := NewLocal(ctx, devs)
	require.NoError(t, err)
	defer closeComms(t, ctx, comms)
	const iters = 20
	reps := 7
	if v, err := strconv.Atoi(os.Getenv("GPUACTOR_COLL_PROBE_REPS")); err == nil && v > 0 {
		reps = v
	}
	hows := []string{"seq", "perrank", "msg", "raw", "raw-gap", "raw-mark8", "raw-query"}
	if v := os.Getenv("GPUACTOR_COLL_PROBE_HOW"); v != "" {
		hows = strings.Split(v, ",")
	}
	maxSize := 32 << 20
	if v, err := strconv.Atoi(os.Getenv("GPUACTOR_COLL_PROBE_MAX")); err == nil && v > 0 {
		maxSize = v
	}
	t.Logf("%9s %8s %9s %9s %9s %9s %9s %9s", "size", "how", "wall/op", "issued", "gpu span", "gpu/op", "tail", "call/op")
	for size := 1 << 20; size <= maxSize; size <<= 1 {
		p := newProbe(t, ctx, comms, ss, size/4)
		for _, how := range hows {
			var wall, issued, span, tail, call []float64
			b0, a0 := devs[0].Stats().Tracker, devs[0].Stats().Actor
			for range reps {
				p.call = 0
				w, is, sp := p.batch(t, ctx, how, iters)
				wall = append(wall, w)
				issued = append(issued, is)
				span = append(span, sp)
				tail = append(tail, w-sp)
				call = append(call, float64(p.call.Nanoseconds())/1e3/iters)
			}
			b1, a1 := devs[0].Stats().Tracker, devs[0].Stats().Actor
			ops := float64(reps * (iters + 2))
			t.Logf("%9d %8s actor 0 per batch: %.2f parks, %.1f µs parked, %.1f µs spinning, %.1f µs busy, %.1f drains", size, how,
				float64(a1.Parks-a0.Parks)/float64(reps), float64((a1.Park-a0.Park).Nanoseconds())/1e3/float64(reps),
				float64((a1.Spin-a0.Spin).Nanoseconds())/1e3/float64(reps), float64((a1.Busy-a0.Busy).Nanoseconds())/1e3/float64(reps),
				float64(a1.Batches-a0.Batches)/float64(reps))
			t.Logf("%9d %8s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f   marks/op %.2f queries/op %.2f polls/op %.2f", size, how, med(wall)/iters, med(issued), med(span), med(span)/iters, med(tail), med(call),
				float64(b1.Watermarks-b0.Watermarks)/ops, float64(b1.Queries-b0.Queries)/ops, float64(b1.Polls-b0.Polls)/ops)
		}
		p.close(t, ctx)
	}
}

type probe struct {
	comms      []*Comm
	ss         []*streams.Stream
	send, recv []*alloc.Buffer[float32]
	e0, e1     []*streams.Event
	mk         []*core.Event // recorded between the raw batches' calls
	call       time.Duration // the raw NCCL calls' host time in the last raw batch, rank 0
}

func newProbe(t *testing.T, ctx context.Context, comms []*Comm, ss []*streams.Stream, elems int) *probe {
	p := &probe{comms: comms, ss: ss}
	for r := range comms {
		s, err := alloc.Malloc[float32](ctx, ss[r], elems)
		require.NoError(t, err)
		rv, err := alloc.Malloc[float32](ctx, ss[r], elems)
		require.NoError(t, err)
		require.NoError(t, ss[r].Memset(ctx, s, 0).Wait(ctx))
		e0, err := streams.NewEvent(ctx, comms[r].dev)
		require.NoError(t, err)
		e1, err := streams.NewEvent(ctx, comms[r].dev)
		require.NoError(t, err)
		mk, err := streams.NewEvent(ctx, comms[r].dev, streams.DisableTiming)
		require.NoError(t, err)
		require.NoError(t, mk.Record(ctx, ss[r]).Wait(ctx))
		p.send, p.recv, p.e0, p.e1 = append(p.send, s), append(p.recv, rv), append(p.e0, e0), append(p.e1, e1)
		p.mk = append(p.mk, (*core.Event)(mk))
	}
	for range bwWarmup {
		fs := make([]*streams.Future, len(comms))
		for r, c := range comms {
			fs[r] = AllReduce(ctx, ss[r], c, p.send[r], p.recv[r], Sum)
		}
		waitAll(t, ctx, fs...)
	}
	return p
}

func (p *probe) close(t *testing.T, ctx context.Context) {
	for r := range p.comms {
		require.NoError(t, p.send[r].Close(ctx))
		require.NoError(t, p.recv[r].Close(ctx))
		require.NoError(t, p.e0[r].Close(ctx))
		require.NoError(t, p.e1[r].Close(ctx))
		require.NoError(t, p.mk[r].Close(ctx))
	}
}

// batch runs iters all-reduces on every rank, issued as how says, and returns the wall time,
// when the last rank's actor had issued its last call, and the longest rank's GPU span, in µs.
func (p *probe) batch(t *testing.T, ctx context.Context, how string, iters int) (wall, issued, span float64) {
	n := len(p.comms)
	last := make([]*streams.Future, n)
	marks := make([]time.Time, n)
	ends := make([]*streams.Future, n)
	issue := func(r int) {
		p.e0[r].Record(ctx, p.ss[r])
		for range iters {
			last[r] = AllReduce(ctx, p.ss[r], p.comms[r], p.send[r], p.recv[r], Sum)
		}
		ends[r] = p.e1[r].Record(ctx, p.ss[r])
	}
	mark := func(r int) *actor.Future[time.Time] {
		return core.Run(ctx, (*core.Device)(p.comms[r].dev), func(backend.Device, *core.Tracker) (time.Time, error) {
			return time.Now(), nil
		})
	}
	ms := make([]*actor.Future[time.Time], n)
	var start time.Time
	switch how {
	case "seq":
		start = time.Now()
		for r := range p.comms {
			p.e0[r].Record(ctx, p.ss[r])
		}
		for range iters {
			for r := range p.comms {
				last[r] = AllReduce(ctx, p.ss[r], p.comms[r], p.send[r], p.recv[r], Sum)
			}
		}
		for r := range p.comms {
			ends[r] = p.e1[r].Record(ctx, p.ss[r])
			ms[r] = mark(r)
		}
	case "msg":
		// A message per call, as seq, but each a bare core.Queue of the NCCL call with its
		// arguments resolved beforehand: the message path without the collective package's.
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for r := range p.comms {
			c := p.comms[r]
			op := AllReduceOp(p.ss[r], c, p.send[r], p.recv[r], Sum)
			a, err := core.Run(ctx, c.core(), func(backend.Device, *core.Tracker) (backend.CollOp, error) { return op.resolve(c.core()) }).Await(ctx)
			require.NoError(t, err)
			args := []backend.CollOp{a}
			wg.Go(func() {
				<-gate
				p.e0[r].Record(ctx, p.ss[r])
				for range iters {
					last[r] = core.Queue(ctx, (*core.Stream)(p.ss[r]), func(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
						return rt.CollLaunch(c.h, h, args)
					})
				}
				ends[r] = p.e1[r].Record(ctx, p.ss[r])
				ms[r] = mark(r)
			})
		}
		start = time.Now()
		close(gate)
		wg.Wait()
	case "raw", "raw-mark1", "raw-mark8", "raw-query", "raw-gap":
		// One message per rank that makes the iters NCCL calls back to back, timing them:
		// the calls' own host cost, and the GPU's span with nothing between the kernels;
		// raw-markK records an event after every Kth call, raw-query asks an event after
		// each, as the tracker's watermarks and polls do between a batch's messages.
		every := map[string]int{"raw-mark1": 1, "raw-mark8": 8}[how]
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for r := range p.comms {
			c := p.comms[r]
			op := AllReduceOp(p.ss[r], c, p.send[r], p.recv[r], Sum)
			wg.Go(func() {
				<-gate
				p.e0[r].Record(ctx, p.ss[r])
				last[r] = core.Queue(ctx, (*core.Stream)(p.ss[r]), func(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
					a, err := op.resolve(c.core())
					if err != nil {
						return err
					}
					ev, err := p.mk[r].Handle()
					if err != nil {
						return err
					}
					args := []backend.CollOp{a}
					t0 := time.Now()
					for i := range iters {
						if err := rt.CollLaunch(c.h, h, args); err != nil {
							return err
						}
						if every > 0 && i%every == 0 {
							if err := rt.EventRecord(ev, h); err != nil {
								return err
							}
						}
						if how == "raw-query" {
							_ = rt.EventQuery(ev)
						}
						if how == "raw-gap" { // the host's pace of seq, without its work
							for g := time.Now(); time.Since(g) < 4*time.Microsecond; {
							}
						}
					}
					if r == 0 {
						p.call = time.Since(t0)
					}
					return nil
				})
				ends[r] = p.e1[r].Record(ctx, p.ss[r])
				ms[r] = mark(r)
			})
		}
		start = time.Now()
		close(gate)
		wg.Wait()
	case "perrank":
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for r := range p.comms {
			wg.Go(func() {
				<-gate
				issue(r)
				ms[r] = mark(r)
			})
		}
		start = time.Now()
		close(gate)
		wg.Wait()
	default:
		panic(fmt.Sprintf("how %q", how))
	}
	waitAll(t, ctx, last...)
	wall = float64(time.Since(start).Nanoseconds()) / 1e3
	for r := range p.comms {
		require.NoError(t, ends[r].Wait(ctx))
		m, err := ms[r].Await(ctx)
		require.NoError(t, err)
		marks[r] = m
		el, err := streams.Elapsed(ctx, p.e0[r], p.e1[r])
		require.NoError(t, err)
		span = max(span, float64(el.Nanoseconds())/1e3)
	}
	issued = float64(slices.MaxFunc(marks, func(a, b time.Time) int { return a.Compare(b) }).Sub(start).Nanoseconds()) / 1e3
	return wall, issued, span
}

func med(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
