package graphs_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// BenchmarkLaunchNGap splits what a LaunchN round of a one-node graph (100 runs) costs over
// the C++ baseline's round, on the actor's own thread, by taking LaunchN's parts one at a
// time into the C loop (runs queued from crossings into C, GraphLaunchN):
//   - cloop: the C++ round: one crossing of 100 runs, then cudaStreamSynchronize;
//   - cloop-chunks: crossings of 32 runs, as LaunchN's messages make;
//   - cloop-end: those crossings, with the end waited for as the tracker does, by recording
//     a watermark and querying it until it passes, not by synchronizing;
//   - cloop-marks: cloop-end with the tracker's work between crossings as it was before
//     LaunchN tracked only its last message (a watermark recorded after the third crossing,
//     queried after each);
//   - cloop-streamq: the crossings, with the end waited for by cudaStreamQuery;
//   - launchn: LaunchN as it is (its messages sized by launch cost: one for these 100 runs);
//   - launchn-32: LaunchN with messages of 32 runs, as it sent them before (all but the last
//     untracked, as now);
//   - launchn-parked: LaunchN with the caller parked in Await rather than spinning (what
//     replaySpin saves).
//
// The C loop rows run inside one message on the actor, timed there; the rows take turns at
// going first. Each figure is the median round of a row, then the median over iterations,
// in µs a launch, and each row's ratio to cloop in the same iteration.
func BenchmarkLaunchNGap(b *testing.B) {
	ctx := context.Background()
	dev, x, s, rt, xh, h := replaySetup(b)
	const round, rounds, chunk = 100, 12, 32
	perLaunch := func(d time.Duration) float64 { return d.Seconds() * 1e6 / round }
	marks := [2]backend.Event{}
	for i := range marks {
		ev, err := core.Run(ctx, (*core.Device)(dev), func(rt backend.Device, _ *core.Tracker) (backend.Event, error) {
			return rt.EventCreate(backend.EventDisableTiming)
		}).Await(ctx)
		require.NoError(b, err)
		marks[i] = ev
	}
	b.Cleanup(func() {
		_, _ = core.Run(ctx, (*core.Device)(dev), func(rt backend.Device, _ *core.Tracker) (struct{}, error) {
			for _, ev := range marks {
				_ = rt.EventDestroy(ev)
			}
			return struct{}{}, nil
		}).Await(ctx)
	})
	// wait spins on query as the tracker's poll does with nothing else to do.
	wait := func(query func() error) error {
		for {
			err := query()
			if err == nil || !errors.Is(err, cudaerr.NotReady) {
				return err
			}
		}
	}
	// cloopRound queues the round's runs in crossings of step and waits for them as end says:
	// "sync" (cudaStreamSynchronize), "mark" (a watermark recorded and queried until it
	// passes), "streamq" (cudaStreamQuery until the stream is idle); mid records a watermark
	// after the third crossing and queries it after every crossing, as the tracker does
	// with a gap's watermark.
	cloopRound := func(step int, mid bool, end string) error {
		for first := 0; first < round; first += step {
			if _, err := rt.GraphLaunchN(xh, h, min(step, round-first)); err != nil {
				return err
			}
			if !mid {
				continue
			}
			if first == 2*chunk {
				if err := rt.EventRecord(marks[0], h); err != nil {
					return err
				}
			}
			if err := rt.EventQuery(marks[0]); err != nil && !errors.Is(err, cudaerr.NotReady) {
				return err
			}
		}
		switch end {
		case "mark":
			if err := rt.EventRecord(marks[1], h); err != nil {
				return err
			}
			return wait(func() error { return rt.EventQuery(marks[1]) })
		case "streamq":
			return wait(func() error { return rt.StreamQuery(h) })
		}
		return rt.StreamSynchronize(h)
	}
	cloopRow := func(step int, mid bool, end string) []float64 {
		got, err := core.Run(ctx, (*core.Device)(dev), func(backend.Device, *core.Tracker) ([]float64, error) {
			var row []float64
			for range rounds {
				start := time.Now()
				if err := cloopRound(step, mid, end); err != nil {
					return nil, err
				}
				row = append(row, perLaunch(time.Since(start)))
			}
			return row[1:], nil
		}).Await(ctx)
		require.NoError(b, err)
		return got
	}
	// launchRow runs LaunchN rounds with per runs a message (0: as LaunchN sizes them), the
	// caller spinning in Await, or parked there.
	launchRow := func(per int, parked bool) []float64 {
		graphs.SetLaunchChunk(x, per)
		var row []float64
		for range rounds {
			start := time.Now()
			f := x.LaunchN(ctx, s, round)
			if parked {
				f.SetAwaitSpin(0)
			}
			_, err := f.Await(ctx)
			require.NoError(b, err)
			row = append(row, perLaunch(time.Since(start)))
		}
		graphs.SetLaunchChunk(x, 0)
		return row[1:]
	}
	names := []string{"cloop", "cloop-chunks", "cloop-end", "cloop-marks", "cloop-streamq", "launchn", "launchn-32", "launchn-parked"}
	rows := []func() []float64{
		func() []float64 { return cloopRow(round, false, "sync") },
		func() []float64 { return cloopRow(chunk, false, "sync") },
		func() []float64 { return cloopRow(chunk, false, "mark") },
		func() []float64 { return cloopRow(chunk, true, "mark") },
		func() []float64 { return cloopRow(chunk, false, "streamq") },
		func() []float64 { return launchRow(0, false) },
		func() []float64 { return launchRow(chunk, false) },
		func() []float64 { return launchRow(0, true) },
	}
	figures, ratios := make([][]float64, len(rows)), make([][]float64, len(rows))
	for i := range b.N {
		got := make([]float64, len(rows))
		for j := range rows {
			k := (i + j) % len(rows)
			got[k] = quantile(rows[k](), 0.5)
		}
		for k := range rows {
			figures[k] = append(figures[k], got[k])
			ratios[k] = append(ratios[k], got[k]/got[0])
		}
	}
	for k, name := range names {
		b.ReportMetric(quantile(figures[k], 0.5), name+"-us/launch")
		if k > 0 {
			b.ReportMetric(quantile(ratios[k], 0.5), name+"-x-cloop")
		}
	}
}
