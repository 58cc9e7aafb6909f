package core

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/nullgpu"
)

// The pieces of a launch + await round trip, on the null backend (internal/nullgpu): a GPU
// that has always finished, so that what is timed is gpuactor's own CPU work.
// docs/design/roundtrip.md reads these figures.

// openNull opens a device on the null backend with an empty kernel loaded.
func openNull(b *testing.B) (*Device, *Kernel) { return openNullWith(b, Config{}) }

// openNullWith is openNull with cfg.
func openNullWith(b *testing.B, cfg Config) (*Device, *Kernel) { return openOn(b, nullgpu.New(), cfg) }

// openOn opens device 0 of be with cfg and the empty kernel loaded, closed at the end of b.
func openOn(b *testing.B, be backend.Backend, cfg Config) (*Device, *Kernel) {
	b.Helper()
	ctx := context.Background()
	d, err := Open(ctx, be, cfg, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = d.Close() })
	spec := backend.ModuleSpec{SimKernels: map[string]cuda.SimKernel{"empty": func(*cuda.KernelCall) error { return nil }}}
	m, err := LoadModule(ctx, d, "empty", spec, nil)
	if err != nil {
		b.Fatal(err)
	}
	k, err := m.Kernel(ctx, "empty")
	if err != nil {
		b.Fatal(err)
	}
	return d, k
}

var oneBlock = cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}

// BenchmarkRoundTripPieces: one operation at a time, each awaited, from the cheapest message to
// the full tracked launch. Differences between neighbours are the pieces:
//
//   - run: a function run on the actor thread and awaited (core.Run): the message hop there
//     and the waiter's wake-up back, with hop-ns and back-ns splitting the two by the clock;
//   - launch_queued: a launch whose future completes once queued (Tracking.Queued): adds the
//     launch's preparation and its op object;
//   - launch: core.Launch, completed when the (null) GPU has passed it: adds the tracker's
//     record and query and the completion from the actor's poll;
//   - launch_query_at_once: the same with the tracker's queryGap at 0, so that the poll that
//     records a watermark asks it too: on a GPU that has always finished, what the query
//     pacing adds.
func BenchmarkRoundTripPieces(b *testing.B) {
	ctx := context.Background()
	b.Run("run", func(b *testing.B) {
		d, _ := openNull(b)
		var hop, back time.Duration
		b.ReportAllocs()
		for b.Loop() {
			var at time.Time
			t0 := time.Now()
			f := Run(ctx, d, func(backend.Device, *Tracker) (struct{}, error) {
				at = time.Now()
				return struct{}{}, nil
			})
			if _, err := f.Await(ctx); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			hop += at.Sub(t0)
			back += t1.Sub(at)
		}
		b.ReportMetric(float64(hop.Nanoseconds())/float64(b.N), "hop-ns/op")
		b.ReportMetric(float64(back.Nanoseconds())/float64(b.N), "back-ns/op")
	})
	b.Run("launch_queued", func(b *testing.B) {
		d, k := openNull(b)
		b.ReportAllocs()
		for b.Loop() {
			spec, err := PrepareLaunch(d, k, oneBlock, nil)
			if err != nil {
				b.Fatal(err)
			}
			o := &launchOp{spec: spec}
			if err := Submit(ctx, d.stream, &o.Msg, o, Tracking{Queued: true}).Wait(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, at := range []struct {
		name     string
		queryGap time.Duration
	}{{"launch", queryGap}, {"launch_query_at_once", 0}} {
		b.Run(at.name, func(b *testing.B) {
			d, k := openNull(b)
			if err := Do(ctx, d, func(_ backend.Device, tr *Tracker) error { tr.queryGap = at.queryGap; return nil }); err != nil {
				b.Fatal(err)
			}
			launchRoundTrips(b, d, k)
		})
	}
	// launch_waiter_query: launch with the waiters allowed to query their watermarks
	// (Config.WaiterQuery): on the null GPU the watermark has passed when it is recorded, so
	// this times what the option adds to the actor's path (a watermark's pin state, its
	// pointer in each operation), and waiter-query/op how often a waiter got to ask first.
	b.Run("launch_waiter_query", func(b *testing.B) {
		d, k := openNullWith(b, Config{WaiterQuery: true})
		before := d.TrackerStats()
		launchRoundTrips(b, d, k)
		after := d.TrackerStats()
		b.ReportMetric(float64(after.WaiterCompleted-before.WaiterCompleted)/float64(b.N), "waiter-done/op")
	})
}

// launchRoundTrips times core.Launch + Wait on d's own stream, one at a time, and reports the
// tracker's watermarks and queries per launch.
func launchRoundTrips(b *testing.B, d *Device, k *Kernel) {
	ctx := context.Background()
	before, parks := d.tracker.counts.snapshot(), d.act.Stats().Parks
	b.ReportAllocs()
	for b.Loop() {
		if err := Launch(ctx, d.stream, k, oneBlock, nil).Wait(ctx); err != nil {
			b.Fatal(err)
		}
	}
	after := d.tracker.counts.snapshot()
	b.ReportMetric(float64(after.Watermarks-before.Watermarks)/float64(b.N), "marks/op")
	b.ReportMetric(float64(after.Queries-before.Queries)/float64(b.N), "queries/op")
	b.ReportMetric(float64(after.Polls-before.Polls)/float64(b.N), "polls/op")
	b.ReportMetric(float64(d.act.Stats().Parks-parks)/float64(b.N), "actor-parks/op")
}

// BenchmarkTrackerPiece: the tracker's share of one awaited launch, on the actor thread alone
// (no message, no waiter): note the launch, register its promise, and poll, which records a
// watermark on the (null) stream, queries it and completes the promise.
func BenchmarkTrackerPiece(b *testing.B) {
	d, _ := openNull(b)
	ctx := context.Background()
	err := Do(ctx, d, func(_ backend.Device, tr *Tracker) error {
		tr.queryGap = 0 // query the watermark in the poll that records it: one poll a launch
		h := d.stream.h
		b.ReportAllocs()
		for b.Loop() {
			p := actor.NewPromise[struct{}]()
			tr.Launched(h, "empty")
			tr.AfterPromise(h, p)
			tr.poll(false, d.ops.clock())
			if !p.Future().Ready() {
				return errors.New("the null GPU's watermark did not complete the promise in one poll")
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkTrackerPieceProbed is BenchmarkTrackerPiece with waiters allowed to probe
// (Config.WaiterQuery): what the watermark's pin state and the operation's pointer to it add to
// the tracker's work on the actor thread, with no waiter asking.
func BenchmarkTrackerPieceProbed(b *testing.B) {
	d, _ := openNullWith(b, Config{WaiterQuery: true})
	ctx := context.Background()
	err := Do(ctx, d, func(_ backend.Device, tr *Tracker) error {
		tr.queryGap = 0
		h := d.stream.h
		b.ReportAllocs()
		for b.Loop() {
			m := new(Msg) // stands for the operation, whose Msg the waiter's probe reads
			p := &m.p
			tr.Launched(h, "empty")
			tr.afterProbed(h, p, &m.wm)
			tr.poll(false, d.ops.clock())
			if !p.Future().Ready() || m.wm.Load() == nil {
				return errors.New("the null GPU's watermark did not complete the promise in one poll")
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
