package actor

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"
)

func noop() (struct{}, error) { return struct{}{}, nil }

func benchActor(b *testing.B, opts ...Option) *Actor {
	b.Helper()
	a, err := New(opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = a.Close() })
	return a
}

// BenchmarkRoundTrip is the latency of one Call+Await of a no-op, one at a time: the cost the
// actor adds to every synchronous GPU call.
func BenchmarkRoundTrip(b *testing.B) {
	a := benchActor(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Call(ctx, a, noop).Await(ctx); err != nil {
			b.Fatal(err)
		}
	}
	reportStats(b, a)
}

// BenchmarkRoundTripNoSpin is the same with spinning off on both sides, to show what the
// spin windows buy.
func BenchmarkRoundTripNoSpin(b *testing.B) {
	a := benchActor(b, WithSpin(0), WithAwaitSpin(0))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Call(ctx, a, noop).Await(ctx); err != nil {
			b.Fatal(err)
		}
	}
	reportStats(b, a)
}

// pipelined keeps `window` calls outstanding per sender and awaits each later, the way a
// service issues work and collects it.
func pipelined(b *testing.B, senders int) {
	a := benchActor(b)
	ctx := context.Background()
	const window = 64
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	per := b.N / senders
	for s := range senders {
		n := per
		if s == 0 {
			n += b.N % senders
		}
		wg.Go(func() {
			ring := make([]*Future[struct{}], window)
			for i := range n {
				slot := i % window
				if f := ring[slot]; f != nil {
					if _, err := f.Await(ctx); err != nil {
						b.Error(err)
						return
					}
				}
				ring[slot] = Call(ctx, a, noop)
			}
			for _, f := range ring {
				if f != nil {
					_, _ = f.Await(ctx)
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	reportStats(b, a)
}

func BenchmarkPipelined1(b *testing.B) { pipelined(b, 1) }
func BenchmarkPipelined8(b *testing.B) { pipelined(b, 8) }

// BenchmarkBatched64 sends 64 no-ops as one PostBatch message; ns/op is per function.
func BenchmarkBatched64(b *testing.B) {
	a := benchActor(b)
	ctx := context.Background()
	fns := make([]func(), 64)
	for i := range fns {
		fns[i] = func() {}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += len(fns) {
		if err := a.PostBatch(ctx, fns); err != nil {
			b.Fatal(err)
		}
	}
	// Count the drain in the time: the work is not done until it ran.
	if _, err := Call(ctx, a, noop).Await(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	reportStats(b, a)
}

// BenchmarkNaiveChannelActor is the baseline the design probe measured: a locked goroutine
// receiving on a channel, replying on a per-call channel, no spinning, no batching.
func BenchmarkNaiveChannelActor(b *testing.B) {
	type req struct {
		fn    func() (struct{}, error)
		reply chan error
	}
	reqs := make(chan req, 1024)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer close(done)
		for r := range reqs {
			_, err := r.fn()
			r.reply <- err
		}
	}()
	b.ReportAllocs()
	for b.Loop() {
		r := req{fn: noop, reply: make(chan error, 1)}
		reqs <- r
		if err := <-r.reply; err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	close(reqs)
	<-done
}

func reportStats(b *testing.B, a *Actor) {
	s := a.Stats()
	if s.Ops == 0 {
		return
	}
	b.ReportMetric(float64(s.Parks)/float64(s.Ops), "parks/op")
	b.ReportMetric(float64(s.Ops)/float64(max(s.Batches, 1)), "ops/batch")
}

// BenchmarkParkedWake: a caller awaits a Call that holds the actor for 300 µs, so the caller
// parks (past its await spin); wake-us is the time from the op's end, read on the actor, to
// the caller's return.
func BenchmarkParkedWake(b *testing.B) {
	a := benchActor(b)
	ctx := context.Background()
	var wake time.Duration
	for b.Loop() {
		end, err := Call(ctx, a, func() (time.Time, error) {
			for start := time.Now(); time.Since(start) < 300*time.Microsecond; {
			}
			return time.Now(), nil
		}).Await(ctx)
		wake += time.Since(end)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(wake.Nanoseconds())/1e3/float64(b.N), "wake-us")
}
