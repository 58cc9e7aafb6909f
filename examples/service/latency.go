package main

import (
	"fmt"
	"io"
	"math"
	"runtime/metrics"
	"time"
)

// slowLimit is the latency issue 42's target puts every request under: the load's report
// counts the requests slower.
const slowLimit = 20 * time.Millisecond

// latencyBuckets are the upper bounds of the load report's histogram; the last bucket holds
// the rest.
var latencyBuckets = []time.Duration{
	100 * time.Microsecond, 200 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond,
	10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 200 * time.Millisecond,
}

// histogram counts sorted latencies into latencyBuckets (one bucket more for the rest).
func histogram(sorted []time.Duration) []int {
	counts := make([]int, len(latencyBuckets)+1)
	b := 0
	for _, l := range sorted {
		for b < len(latencyBuckets) && l > latencyBuckets[b] {
			b++
		}
		counts[b]++
	}
	return counts
}

// printHistogram writes the histogram of sorted latencies, from the first bucket that holds a
// request to the last, and how many took longer than slowLimit.
func printHistogram(w io.Writer, sorted []time.Duration) {
	counts := histogram(sorted)
	first, last := -1, -1
	for i, n := range counts {
		if n > 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	over := len(sorted) - countAtMost(sorted, slowLimit)
	fmt.Fprintf(w, "latency histogram (%d requests, %d over %v):\n", len(sorted), over, slowLimit)
	for i := first; i >= 0 && i <= last; i++ {
		lo := "0"
		if i > 0 {
			lo = latencyBuckets[i-1].String()
		}
		hi := "∞"
		if i < len(latencyBuckets) {
			hi = latencyBuckets[i].String()
		}
		fmt.Fprintf(w, "  (%s, %s]: %d (%.3f%%)\n", lo, hi, counts[i], 100*float64(counts[i])/float64(len(sorted)))
	}
}

// countAtMost is how many of sorted are at most d.
func countAtMost(sorted []time.Duration, d time.Duration) int {
	lo, hi := 0, len(sorted)
	for lo < hi {
		m := (lo + hi) / 2
		if sorted[m] <= d {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// runtimeSample is what the Go runtime says about the process, at one moment: the figures
// that tell whether the load's slow requests waited on the garbage collector or for a P.
type runtimeSample struct {
	gcCycles, allocBytes uint64
	gcPauses, schedLat   *metrics.Float64Histogram // stop-the-world pauses for GC; time goroutines spent runnable
	gomaxprocs           uint64
}

var runtimeMetrics = []string{"/gc/cycles/total:gc-cycles", "/gc/heap/allocs:bytes",
	"/sched/pauses/total/gc:seconds", "/sched/latencies:seconds", "/sched/gomaxprocs:threads"}

func sampleRuntime() runtimeSample {
	s := make([]metrics.Sample, len(runtimeMetrics))
	for i, name := range runtimeMetrics {
		s[i].Name = name
	}
	metrics.Read(s)
	var r runtimeSample
	if s[0].Value.Kind() == metrics.KindUint64 {
		r.gcCycles = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		r.allocBytes = s[1].Value.Uint64()
	}
	if s[2].Value.Kind() == metrics.KindFloat64Histogram {
		r.gcPauses = s[2].Value.Float64Histogram()
	}
	if s[3].Value.Kind() == metrics.KindFloat64Histogram {
		r.schedLat = s[3].Value.Float64Histogram()
	}
	if s[4].Value.Kind() == metrics.KindUint64 {
		r.gomaxprocs = s[4].Value.Uint64()
	}
	return r
}

// runtimeDelta is what the runtime did between two samples.
type runtimeDelta struct {
	requests             int
	gcCycles, allocBytes uint64
	gcPauses, schedLat   histDelta
	gomaxprocs           uint64
}

// histDelta is the difference of two samples of one runtime histogram.
type histDelta struct {
	counts  []uint64
	buckets []float64
}

func diffHist(a, b *metrics.Float64Histogram) histDelta {
	if a == nil || b == nil || len(a.Counts) != len(b.Counts) {
		return histDelta{}
	}
	d := histDelta{counts: make([]uint64, len(b.Counts)), buckets: b.Buckets}
	for i := range b.Counts {
		d.counts[i] = b.Counts[i] - a.Counts[i]
	}
	return d
}

func (h histDelta) total() uint64 {
	var n uint64
	for _, c := range h.counts {
		n += c
	}
	return n
}

// quantile is the upper bound of the bucket that holds quantile q (seconds); 0 when empty.
func (h histDelta) quantile(q float64) float64 {
	n := h.total()
	if n == 0 {
		return 0
	}
	want := uint64(math.Ceil(q * float64(n)))
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= max(want, 1) {
			return h.upper(i)
		}
	}
	return h.upper(len(h.counts) - 1)
}

// over is how many samples lie in buckets whose lower bound is at least s seconds.
func (h histDelta) over(s float64) uint64 {
	var n uint64
	for i, c := range h.counts {
		if h.buckets[i] >= s {
			n += c
		}
	}
	return n
}

func (h histDelta) upper(i int) float64 {
	if u := h.buckets[i+1]; !math.IsInf(u, 1) {
		return u
	}
	return h.buckets[i]
}

func diffRuntime(a, b runtimeSample, requests int) runtimeDelta {
	return runtimeDelta{requests: requests, gcCycles: b.gcCycles - a.gcCycles, allocBytes: b.allocBytes - a.allocBytes,
		gcPauses: diffHist(a.gcPauses, b.gcPauses), schedLat: diffHist(a.schedLat, b.schedLat), gomaxprocs: b.gomaxprocs}
}

func (d runtimeDelta) print(w io.Writer) {
	perReq := 0.0
	if d.requests > 0 {
		perReq = float64(d.allocBytes) / float64(d.requests)
	}
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)).Round(time.Microsecond) }
	fmt.Fprintf(w, "runtime over the load (GOMAXPROCS %d): %d GC cycles, %.0f bytes allocated a request (the whole process)\n",
		d.gomaxprocs, d.gcCycles, perReq)
	fmt.Fprintf(w, "GC stop-the-world pauses: %d, p99 ≤ %v, max ≤ %v\n", d.gcPauses.total(),
		sec(d.gcPauses.quantile(0.99)), sec(d.gcPauses.quantile(1)))
	fmt.Fprintf(w, "time runnable before running (scheduler latency): p50 ≤ %v, p99 ≤ %v, p99.99 ≤ %v, max ≤ %v; %d waits in buckets from 1 ms up\n",
		sec(d.schedLat.quantile(0.5)), sec(d.schedLat.quantile(0.99)), sec(d.schedLat.quantile(0.9999)),
		sec(d.schedLat.quantile(1)), d.schedLat.over(1e-3))
}
