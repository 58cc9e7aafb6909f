package graphs_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testgpu"
	"github.com/gpuactor/gpuactor/streams"
)

// BenchmarkRoundVsBinding interleaves, round by round on one device, stream and executable
// graph, the bench graph_node row's round (100 launches of a chain of n empty kernels)
// through gpuactor with the same 100 launches made straight through the binding from a
// thread of their own, then a synchronize (binding), and from the actor's thread in one
// message (actorloop). Adjacent rounds share the machine's state, so the median of the
// per-round ratios (x-binding) says what the actor, the futures and the tracking add to a
// round, even on hosts whose speed drifts between runs by more than that (the bench's
// binding rows run seconds apart from the rows they divide).
//
// gpuactor's ways (futures awaited in turn, at most k in flight):
//   - w64: k = 64, as the bench row; the round starts right after a no-op message, so the
//     actor is awake and running;
//   - w64x2: two rounds back to back, the second timed, as the bench row's rounds follow
//     each other; w64x2wake puts a no-op message between them, w64x2sleep a 200 µs sleep
//     (both the caller and the actor park);
//   - w100: all 100 issued at once.
//
// Per way: us/node (the round on the caller's clock), enq-us/launch (from the round's start
// to the actor's clock after its last launch), gpu-us/node (the GPU's span of the launches,
// from timing events) and x-binding.
func BenchmarkRoundVsBinding(b *testing.B) {
	ctx := context.Background()
	for _, c := range []struct {
		n    int
		spin time.Duration // Await's spin; 0: the default
	}{{1, 0}, {10, 0}, {10, time.Millisecond}} {
		name := fmt.Sprintf("%dB", c.n)
		opts := []device.Option{device.WithBackend(device.BackendCUDA)}
		if c.spin > 0 {
			name += fmt.Sprintf("/spin%v", c.spin)
			opts = append(opts, device.WithActorOptions(actor.WithAwaitSpin(c.spin)))
		}
		n := c.n
		b.Run(name, func(b *testing.B) {
			testgpu.Need(b, testdev.GPU(), "the cuda backend sees no device")
			dev, err := device.Open(ctx, 0, opts...)
			require.NoError(b, err)
			b.Cleanup(func() { _ = dev.Close() }) // after emptyChain's cleanups
			x := emptyChain(b, dev, n)
			s, err := streams.New(ctx, dev)
			require.NoError(b, err)
			defer s.Destroy(ctx)
			xh := graphs.HandleOf(x)
			type handles struct {
				rt backend.Device
				h  backend.Stream
			}
			hs, err := streams.Exec(ctx, s, func(rt backend.Device, _ *device.Tracker, h backend.Stream) (handles, error) {
				return handles{rt, h}, rt.GraphLaunch(xh, h)
			}).Await(ctx)
			require.NoError(b, err)
			const round, window = 100, 64
			launches := func(rt backend.Device, h backend.Stream) error {
				for range round {
					if err := rt.GraphLaunch(xh, h); err != nil {
						return err
					}
				}
				return rt.StreamSynchronize(h)
			}
			// The binding's rounds run on a locked thread of their own, timed there: the whole
			// round, and up to the last launch's return.
			type timing struct {
				all, enq time.Duration
				gpu      float64 // s, the GPU's span of the round's launches
			}
			work, took := make(chan struct{}), make(chan timing)
			defer close(work)
			go func() {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				for range work {
					start := time.Now()
					for range round {
						if err := hs.rt.GraphLaunch(xh, hs.h); err != nil {
							panic(err)
						}
					}
					enq := time.Since(start)
					if err := hs.rt.StreamSynchronize(hs.h); err != nil {
						panic(err)
					}
					took <- timing{time.Since(start), enq, 0}
				}
			}()
			// A round through the actor starts with the actor awake, as the bench row's rounds
			// (back to back) do: after a binding round it has parked.
			wake := func() {
				_, err := device.Exec(ctx, dev, func(backend.Device, *device.Tracker) (struct{}, error) { return struct{}{}, nil }).Await(ctx)
				require.NoError(b, err)
			}
			// A way issues the round's launches with at most k futures in flight, each awaited
			// in turn (the bench row's k is 64; k = round issues them all at once). A round
			// starts with the actor awake, or, with twice, right after an untimed round of the
			// same way, as the bench row's rounds follow each other.
			type way struct {
				name    string
				k       int
				twice   bool
				between func() // between the two rounds of twice
			}
			ways := []way{{"w64", window, false, nil}, {"w64x2", window, true, nil}, {"w64x2wake", window, true, wake},
				{"w64x2sleep", window, true, func() { time.Sleep(200 * time.Microsecond) }}, {"w100", round, false, nil}}
			var futs [round]*streams.Future
			// Timing events around each round's launches: the GPU's span of the round.
			evs, err := streams.Exec(ctx, s, func(rt backend.Device, _ *device.Tracker, _ backend.Stream) (ev [2]backend.Event, err error) {
				if ev[0], err = rt.EventCreate(backend.EventDefault); err != nil {
					return ev, err
				}
				ev[1], err = rt.EventCreate(backend.EventDefault)
				return ev, err
			}).Await(ctx)
			require.NoError(b, err)
			defer func() {
				_, _ = streams.Exec(ctx, s, func(rt backend.Device, _ *device.Tracker, _ backend.Stream) (struct{}, error) {
					return struct{}{}, errors.Join(rt.EventDestroy(evs[0]), rt.EventDestroy(evs[1]))
				}).Await(ctx)
			}()
			record := func(ev backend.Event) *actor.Future[struct{}] {
				return streams.Exec(ctx, s, func(rt backend.Device, _ *device.Tracker, h backend.Stream) (struct{}, error) {
					return struct{}{}, rt.EventRecord(ev, h)
				})
			}
			gpuSpan := func() float64 {
				ms, err := streams.Exec(ctx, s, func(rt backend.Device, _ *device.Tracker, _ backend.Stream) (float32, error) {
					if err := rt.EventSynchronize(evs[1]); err != nil {
						return 0, err
					}
					return rt.EventElapsed(evs[0], evs[1])
				}).Await(ctx)
				require.NoError(b, err)
				return float64(ms) / 1e3
			}
			issue := func(k int) (start time.Time, enqueued *actor.Future[time.Time]) {
				start = time.Now()
				record(evs[0])
				for i := range futs {
					if i >= k {
						_, err := futs[i-k].Await(ctx)
						require.NoError(b, err)
					}
					futs[i] = x.Launch(ctx, s)
				}
				record(evs[1])
				// Runs once the actor has enqueued every launch of the round.
				enqueued = device.Exec(ctx, dev, func(backend.Device, *device.Tracker) (time.Time, error) { return time.Now(), nil })
				for _, f := range futs[round-k:] {
					_, err := f.Await(ctx)
					require.NoError(b, err)
				}
				return start, enqueued
			}
			windowed := func(w way) timing {
				wake()
				if w.twice {
					_, first := issue(w.k)
					_, err := first.Await(ctx)
					require.NoError(b, err)
					if w.between != nil {
						w.between()
					}
				}
				start, enqueued := issue(w.k)
				all := time.Since(start)
				at, err := enqueued.Await(ctx)
				require.NoError(b, err)
				return timing{all, at.Sub(start), gpuSpan()}
			}
			actorloop := func() time.Duration {
				wake()
				d, err := streams.Exec(ctx, s, func(rt backend.Device, _ *device.Tracker, h backend.Stream) (time.Duration, error) {
					start := time.Now()
					err := launches(rt, h)
					return time.Since(start), err
				}).Await(ctx)
				require.NoError(b, err)
				return d
			}
			type series struct{ all, enq, gpu, ratio []float64 }
			got := make([]series, len(ways))
			var bind, bindEnq, loop, loopOverBind []float64
			b.ResetTimer()
			for i := range b.N {
				// Each iteration runs every way once, in an order that rotates, around one
				// binding round.
				order := make([]int, 0, len(ways)+2)
				for k := range len(ways) + 2 {
					order = append(order, (k+i)%(len(ways)+2))
				}
				w := make([]timing, len(ways))
				var d timing
				var l time.Duration
				for _, k := range order {
					switch {
					case k < len(ways):
						w[k] = windowed(ways[k])
					case k == len(ways):
						work <- struct{}{}
						d = <-took
					default:
						l = actorloop()
					}
				}
				for k := range ways {
					got[k].all = append(got[k].all, w[k].all.Seconds())
					got[k].enq = append(got[k].enq, w[k].enq.Seconds())
					got[k].gpu = append(got[k].gpu, w[k].gpu)
					got[k].ratio = append(got[k].ratio, w[k].all.Seconds()/d.all.Seconds())
				}
				bind, bindEnq = append(bind, d.all.Seconds()), append(bindEnq, d.enq.Seconds())
				loop = append(loop, l.Seconds())
				loopOverBind = append(loopOverBind, l.Seconds()/d.all.Seconds())
			}
			nodes := 1e6 / float64(round*n)
			for k, way := range ways {
				name := way.name
				b.ReportMetric(medianOf(got[k].all)*nodes, name+"-us/node")
				b.ReportMetric(medianOf(got[k].enq)*1e6/round, name+"-enq-us/launch")
				b.ReportMetric(medianOf(got[k].gpu)*nodes, name+"-gpu-us/node")
				b.ReportMetric(medianOf(got[k].ratio), name+"-x-binding")
			}
			b.ReportMetric(medianOf(bind)*nodes, "binding-us/node")
			b.ReportMetric(medianOf(bindEnq)*1e6/round, "binding-enq-us/launch")
			b.ReportMetric(medianOf(loop)*nodes, "actorloop-us/node")
			b.ReportMetric(medianOf(loopOverBind), "actorloop-x-binding")
		})
	}
}

func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}
