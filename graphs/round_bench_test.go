package graphs_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testgpu"
	"github.com/gpuactor/gpuactor/streams"
)

// BenchmarkRoundVsBinding interleaves, round by round on one device, stream and executable
// graph, the bench graph_node row's round (100 launches of a chain of n empty kernels)
// through gpuactor with the same 100 launches made straight through the binding from a
// thread of their own, then a synchronize (binding), and from the actor's thread in one
// message (actorloop), and through Exec.LaunchN (launchn, and launchnx2 for back-to-back
// rounds). Adjacent rounds share the machine's state, so the median of the
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
			opts = append(opts, device.WithActorTuning(device.ActorTuning{AwaitSpin: c.spin}))
		}
		n := c.n
		b.Run(name, func(b *testing.B) {
			testgpu.Need(b, testdev.GPU(), "the cuda backend sees no device")
			dev, x, s := chainBench(b, func() (*device.Device, error) { return device.Open(ctx, 0, opts...) }, n)
			xh := graphs.HandleOf(x)
			const round, window = 100, 64
			launchAll := func(rt backend.Device, h backend.Stream) error {
				for range round {
					if err := rt.GraphLaunch(xh, h); err != nil {
						return err
					}
				}
				return nil
			}
			type timing struct {
				all, enq time.Duration // the round, and up to the last launch's enqueue
				gpu      float64       // s, the GPU's span of the round's launches
				err      error
			}
			// The binding's rounds run on a locked thread of their own, with the runtime and
			// stream handles taken from the actor, timed there.
			rt, h := bindingHandles(b, s, xh)
			onThread := lockedThread(b)
			binding := func() timing {
				var d timing
				onThread(func() {
					start := time.Now()
					err := launchAll(rt, h)
					enq := time.Since(start)
					if err == nil {
						err = rt.StreamSynchronize(h)
					}
					d = timing{all: time.Since(start), enq: enq, err: err}
				})
				require.NoError(b, d.err)
				return d
			}
			actorloop := func() time.Duration {
				wakeActor(b, dev)
				d, err := core.RunOn(ctx, (*core.Stream)(s), func(rt backend.Device, _ *core.Tracker, h backend.Stream) (time.Duration, error) {
					start := time.Now()
					if err := launchAll(rt, h); err != nil {
						return 0, err
					}
					err := rt.StreamSynchronize(h)
					return time.Since(start), err
				}).Await(ctx)
				require.NoError(b, err)
				return d
			}
			// launchN runs the round as one Exec.LaunchN, after a no-op message, or with twice
			// right after an untimed one.
			launchN := func(twice bool) func() time.Duration {
				return func() time.Duration {
					wakeActor(b, dev)
					if twice {
						_, err := x.LaunchN(ctx, s, round).Await(ctx)
						require.NoError(b, err)
					}
					start := time.Now()
					_, err := x.LaunchN(ctx, s, round).Await(ctx)
					require.NoError(b, err)
					return time.Since(start)
				}
			}
			// Rounds of the actor's own loop and of LaunchN, timed on the caller's clock.
			loops := []struct {
				name string
				run  func() time.Duration
			}{{"actorloop", actorloop}, {"launchn", launchN(false)}, {"launchnx2", launchN(true)}}
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
			ways := []way{{"w64", window, false, nil}, {"w64x2", window, true, nil},
				{"w64x2wake", window, true, func() { wakeActor(b, dev) }},
				{"w64x2sleep", window, true, func() { time.Sleep(200 * time.Microsecond) }}, {"w100", round, false, nil}}
			span := newGPUSpan(b, dev, s)
			var futs [round]*streams.Future
			// issue runs a round and returns its start and the actor's clock after its last
			// launch.
			issue := func(k int) (start time.Time, enqueued *actor.Future[time.Time]) {
				start = time.Now()
				span.mark(0)
				for i := range futs {
					if i >= k {
						_, err := futs[i-k].Await(ctx)
						require.NoError(b, err)
					}
					futs[i] = x.Launch(ctx, s)
				}
				span.mark(1)
				enqueued = actorClock(ctx, dev)
				for _, f := range futs[round-k:] {
					_, err := f.Await(ctx)
					require.NoError(b, err)
				}
				return start, enqueued
			}
			windowed := func(w way) timing {
				wakeActor(b, dev)
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
				return timing{all: all, enq: at.Sub(start), gpu: span.seconds(b)}
			}
			type series struct{ all, enq, gpu, ratio []float64 }
			got := make([]series, len(ways))
			loopGot := make([]series, len(loops))
			var bind, bindEnq []float64
			b.ResetTimer()
			for i := range b.N {
				// Each iteration runs every way, the binding and every loop once, in an order
				// that rotates.
				w := make([]timing, len(ways))
				l := make([]time.Duration, len(loops))
				var d timing
				all := len(ways) + 1 + len(loops)
				for j := range all {
					switch k := (i + j) % all; {
					case k < len(ways):
						w[k] = windowed(ways[k])
					case k == len(ways):
						d = binding()
					default:
						l[k-len(ways)-1] = loops[k-len(ways)-1].run()
					}
				}
				for k := range ways {
					got[k].all = append(got[k].all, w[k].all.Seconds())
					got[k].enq = append(got[k].enq, w[k].enq.Seconds())
					got[k].gpu = append(got[k].gpu, w[k].gpu)
					got[k].ratio = append(got[k].ratio, w[k].all.Seconds()/d.all.Seconds())
				}
				for k := range loops {
					loopGot[k].all = append(loopGot[k].all, l[k].Seconds())
					loopGot[k].ratio = append(loopGot[k].ratio, l[k].Seconds()/d.all.Seconds())
				}
				bind, bindEnq = append(bind, d.all.Seconds()), append(bindEnq, d.enq.Seconds())
			}
			perNode, perLaunch := 1e6/float64(round*n), 1e6/float64(round)
			for k, way := range ways {
				b.ReportMetric(quantile(got[k].all, 0.5)*perNode, way.name+"-us/node")
				b.ReportMetric(quantile(got[k].enq, 0.5)*perLaunch, way.name+"-enq-us/launch")
				b.ReportMetric(quantile(got[k].gpu, 0.5)*perNode, way.name+"-gpu-us/node")
				b.ReportMetric(quantile(got[k].ratio, 0.5), way.name+"-x-binding")
			}
			for k, loop := range loops {
				b.ReportMetric(quantile(loopGot[k].all, 0.5)*perNode, loop.name+"-us/node")
				b.ReportMetric(quantile(loopGot[k].ratio, 0.5), loop.name+"-x-binding")
			}
			b.ReportMetric(quantile(bind, 0.5)*perNode, "binding-us/node")
			b.ReportMetric(quantile(bindEnq, 0.5)*perLaunch, "binding-enq-us/launch")
		})
	}
}
