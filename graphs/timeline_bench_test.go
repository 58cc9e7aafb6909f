package graphs_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// BenchmarkActorTimeline: where a launch's time goes on the actor thread. A round issues 100
// messages at once, each calling cudaGraphLaunch between two clock reads, and awaits them in
// turn (the caller spins on the future the actor is running); a held round queues the same
// 100 behind a message that holds the actor until all are in, with nobody waiting while they
// run; a loop round makes the 100 calls from one message. call-us is a call's median
// duration, gap-us the median time from one call's end to the next one's start (mean- the
// means, p90gap-us the 90th percentile), and launch-us the Exec.Launch path's time per launch,
// issued at once, up to the actor's clock after the last. spin2us replaces each call by a
// 2 µs busy wait in Go: what the message path costs next to a call that is not a cgo call.
func BenchmarkActorTimeline(b *testing.B) {
	for _, call := range []string{"launch", "spin2us"} {
		b.Run(call, func(b *testing.B) {
			launchBackends(b, func(b *testing.B, dev *device.Device, x *graphs.Exec, s *streams.Stream) {
				actorTimeline(b, dev, x, s, call == "spin2us")
			})
		})
	}
}

// actorTimeline is BenchmarkActorTimeline on one backend; with spin, each call busy-waits 2 µs
// in Go instead of launching.
func actorTimeline(b *testing.B, dev *device.Device, x *graphs.Exec, s *streams.Stream, spin bool) {
	ctx := context.Background()
	xh := graphs.HandleOf(x)
	const round = 100
	base := time.Now()
	type span struct{ from, to time.Duration }
	timed := func(rt backend.Device, h backend.Stream) (span, error) {
		from := time.Since(base)
		if spin {
			for time.Since(base)-from < 2*time.Microsecond {
			}
			return span{from, time.Since(base)}, nil
		}
		err := rt.GraphLaunch(xh, h)
		return span{from, time.Since(base)}, err
	}
	sync := func() {
		_, err := core.RunOn(ctx, (*core.Stream)(s), func(rt backend.Device, _ *core.Tracker, h backend.Stream) (struct{}, error) {
			return struct{}{}, rt.StreamSynchronize(h)
		}).Await(ctx)
		require.NoError(b, err)
	}
	// Calls and gaps of one way, across rounds.
	type way struct{ calls, gaps []float64 }
	var sent, held, loop way
	var launch []float64
	add := func(w *way, sp []span) {
		for i, x := range sp {
			w.calls = append(w.calls, (x.to - x.from).Seconds())
			if i > 0 {
				w.gaps = append(w.gaps, (x.from - sp[i-1].to).Seconds())
			}
		}
	}
	futs := make([]*actor.Future[span], round)
	sp := make([]span, round)
	send := func() {
		for i := range futs {
			futs[i] = core.RunOn(ctx, (*core.Stream)(s), func(rt backend.Device, _ *core.Tracker, h backend.Stream) (span, error) { return timed(rt, h) })
		}
	}
	collect := func(w *way) {
		for i, f := range futs {
			var err error
			sp[i], err = f.Await(ctx)
			require.NoError(b, err)
		}
		add(w, sp)
		sync()
	}
	var launches [round]*streams.Future
	b.ResetTimer()
	for range b.N {
		send()
		collect(&sent)
		// held: the same messages, all queued before the actor sees any (a first message
		// holds it), with nobody waiting on a future while they run.
		var release atomic.Bool
		hold := core.Run(ctx, (*core.Device)(dev), func(backend.Device, *core.Tracker) (struct{}, error) {
			for !release.Load() {
			}
			return struct{}{}, nil
		})
		send()
		release.Store(true)
		time.Sleep(time.Millisecond)
		_, err := hold.Await(ctx)
		require.NoError(b, err)
		collect(&held)
		out, err := core.RunOn(ctx, (*core.Stream)(s), func(rt backend.Device, _ *core.Tracker, h backend.Stream) ([]span, error) {
			out := make([]span, round)
			for i := range out {
				var err error
				if out[i], err = timed(rt, h); err != nil {
					return nil, err
				}
			}
			return out, nil
		}).Await(ctx)
		require.NoError(b, err)
		add(&loop, out)
		sync()
		start := time.Now()
		for i := range launches {
			launches[i] = x.Launch(ctx, s)
		}
		at, err := actorClock(ctx, dev).Await(ctx)
		require.NoError(b, err)
		launch = append(launch, at.Sub(start).Seconds()/round)
		for _, f := range launches {
			_, err := f.Await(ctx)
			require.NoError(b, err)
		}
	}
	for _, w := range []struct {
		prefix string
		way
	}{{"", sent}, {"held-", held}, {"loop-", loop}} {
		b.ReportMetric(quantile(w.calls, 0.5)*1e6, w.prefix+"call-us")
		b.ReportMetric(quantile(w.gaps, 0.5)*1e6, w.prefix+"gap-us")
		b.ReportMetric(mean(w.calls)*1e6, w.prefix+"mean-call-us")
		b.ReportMetric(mean(w.gaps)*1e6, w.prefix+"mean-gap-us")
	}
	b.ReportMetric(quantile(sent.gaps, 0.9)*1e6, "p90gap-us")
	b.ReportMetric(quantile(launch, 0.5)*1e6, "launch-us")
}
