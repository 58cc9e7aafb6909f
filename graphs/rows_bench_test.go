package graphs_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// BenchmarkLaunchNRows runs rounds as the bench's graph_node_launchn and binding_graph_node
// rows do (12 back-to-back rounds of 100 runs of a one-node graph, the first untimed), a row
// of each in turn, and splits a LaunchN round into its parts on the actor's clock, read by
// messages queued around the LaunchN:
//   - pickup: from the caller's start to the actor running the message before the chunks;
//   - enq: from there to the message after the chunks (the runs' launches);
//   - tail: from there to Await returning (the GPU finishing, the watermark, the completion);
//
// and the binding's round into enq (the launch loop) and tail (cudaStreamSynchronize). The
// launchn row is the same rounds without the clock messages; the parked row's enq is the
// clocked one's with the caller parked in Await rather than spinning beside the actor (does
// a second busy core slow the launches?). The cloop rows are the C++ baseline's round with
// no actor in the way: the runs queued from one crossing into C (GraphLaunchN, the C loop
// LaunchN's chunks use) and a cudaStreamSynchronize, timed where they run, on the actor's
// thread (one message for all the row's rounds) and on the binding's. launchn-x-cloop is
// then what LaunchN's messages, futures and tracking cost on the very thread that launches,
// and cloop-own-x-cloop how far two threads' launch rates differ (a one-node launch's cost
// depends on the CPU the thread runs on: bench/results/FINDINGS.md). A
// row's figure is its median round; each figure reported is the median over the iterations.
func BenchmarkLaunchNRows(b *testing.B) {
	ctx := context.Background()
	dev, x, s, rt, xh, h := replaySetup(b)
	const round, rounds = 100, 12
	onThread := lockedThread(b)
	// The binding's rows run on a locked thread of their own, as bench's binding rows do.
	type bindRound struct{ all, enq time.Duration }
	bindingRow := func() (row []bindRound) {
		onThread(func() {
			for range rounds {
				start := time.Now()
				for range round {
					if err := rt.GraphLaunch(xh, h); err != nil {
						panic(err)
					}
				}
				enq := time.Since(start)
				if err := rt.StreamSynchronize(h); err != nil {
					panic(err)
				}
				row = append(row, bindRound{time.Since(start), enq})
			}
		})
		return row
	}
	perLaunch := func(d time.Duration) float64 { return d.Seconds() * 1e6 / round }
	// cloopRow is the C++ round on rt and h: n runs from one crossing, then a synchronize.
	cloopRow := func() (row []float64) {
		for range rounds {
			start := time.Now()
			if _, err := rt.GraphLaunchN(xh, h, round); err != nil {
				panic(err)
			}
			if err := rt.StreamSynchronize(h); err != nil {
				panic(err)
			}
			row = append(row, perLaunch(time.Since(start)))
		}
		return row[1:]
	}
	var (
		bindAll, bindEnq, bindTail     []float64
		plain, cloop, cloopOwn         []float64
		cloopRatios, ownRatios         []float64
		all, pickup, enq, tail, ratios []float64
		parkEnq                        []float64
	)
	for i := range b.N {
		var bAll, bEnq, bTail, p, a, pu, e, t, pe, cl, co []float64
		rowBinding := func() {
			for _, r := range bindingRow()[1:] {
				bAll, bEnq, bTail = append(bAll, perLaunch(r.all)), append(bEnq, perLaunch(r.enq)), append(bTail, (r.all-r.enq).Seconds()*1e6)
			}
		}
		rowPlain := func() {
			for r := range rounds {
				start := time.Now()
				_, err := x.LaunchN(ctx, s, round).Await(ctx)
				require.NoError(b, err)
				if r > 0 {
					p = append(p, perLaunch(time.Since(start)))
				}
			}
		}
		rowClocked := func(park bool) {
			for r := range rounds {
				start := time.Now()
				before := actorClock(ctx, dev)
				f := x.LaunchN(ctx, s, round)
				after := actorClock(ctx, dev)
				if park {
					f.SetAwaitSpin(0)
				}
				_, err := f.Await(ctx)
				require.NoError(b, err)
				end := time.Now()
				t0, err := before.Await(ctx)
				require.NoError(b, err)
				t1, err := after.Await(ctx)
				require.NoError(b, err)
				switch {
				case r == 0:
				case park:
					pe = append(pe, perLaunch(t1.Sub(t0)))
				default:
					a = append(a, perLaunch(end.Sub(start)))
					pu, e, t = append(pu, t0.Sub(start).Seconds()*1e6), append(e, perLaunch(t1.Sub(t0))), append(t, end.Sub(t1).Seconds()*1e6)
				}
			}
		}
		rowCLoop := func() {
			var err error
			cl, err = core.Run(ctx, (*core.Device)(dev), func(backend.Device, *core.Tracker) ([]float64, error) {
				return cloopRow(), nil
			}).Await(ctx)
			require.NoError(b, err)
		}
		rowCLoopOwn := func() { onThread(func() { co = cloopRow() }) }
		rows := []func(){rowBinding, rowPlain, func() { rowClocked(false) }, func() { rowClocked(true) }, rowCLoop, rowCLoopOwn}
		for j := range rows {
			rows[(i+j)%len(rows)]()
		}
		bindAll, bindEnq, bindTail = append(bindAll, quantile(bAll, 0.5)), append(bindEnq, quantile(bEnq, 0.5)), append(bindTail, quantile(bTail, 0.5))
		plain = append(plain, quantile(p, 0.5))
		all, pickup, enq, tail = append(all, quantile(a, 0.5)), append(pickup, quantile(pu, 0.5)), append(enq, quantile(e, 0.5)), append(tail, quantile(t, 0.5))
		ratios = append(ratios, quantile(p, 0.5)/quantile(bAll, 0.5))
		parkEnq = append(parkEnq, quantile(pe, 0.5))
		cloop, cloopOwn = append(cloop, quantile(cl, 0.5)), append(cloopOwn, quantile(co, 0.5))
		cloopRatios, ownRatios = append(cloopRatios, quantile(p, 0.5)/quantile(cl, 0.5)), append(ownRatios, quantile(co, 0.5)/quantile(cl, 0.5))
	}
	b.ReportMetric(quantile(bindAll, 0.5), "binding-us/node")
	b.ReportMetric(quantile(bindEnq, 0.5), "binding-enq-us/launch")
	b.ReportMetric(quantile(bindTail, 0.5), "binding-tail-us")
	b.ReportMetric(quantile(plain, 0.5), "launchn-us/node")
	b.ReportMetric(quantile(ratios, 0.5), "launchn-x-binding")
	b.ReportMetric(quantile(all, 0.5), "clocked-us/node")
	b.ReportMetric(quantile(pickup, 0.5), "clocked-pickup-us")
	b.ReportMetric(quantile(enq, 0.5), "clocked-enq-us/launch")
	b.ReportMetric(quantile(tail, 0.5), "clocked-tail-us")
	b.ReportMetric(quantile(parkEnq, 0.5), "parked-enq-us/launch")
	b.ReportMetric(quantile(cloop, 0.5), "cloop-us/node")
	b.ReportMetric(quantile(cloopOwn, 0.5), "cloop-own-us/node")
	b.ReportMetric(quantile(cloopRatios, 0.5), "launchn-x-cloop")
	b.ReportMetric(quantile(ownRatios, 0.5), "cloop-own-x-cloop")
}
