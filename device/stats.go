package device

import (
	"math"
	"time"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Stats is one snapshot of a device: what waits for its actor, what is in flight on the GPU,
// how long operations take, how its actor and its completion tracking spend their time, its
// memory and staging, and whether it failed. Device.Stats takes it without a lock and without waiting for the actor,
// so a monitoring endpoint can read it as often as it likes. It marshals to JSON as is
// (expvar.Func(func() any { return dev.Stats() })).
type Stats struct {
	Ordinal int
	// Backend is the device's backend, as Device.Backend names it: an isolated device's is
	// its worker's (cuda or sim); Isolated tells it runs in a worker process.
	Backend  BackendKind
	Isolated bool
	// Failure is the sticky error that failed the device (Device.Err), as text; "" while the
	// device is healthy.
	Failure string `json:",omitempty"`
	Closed  bool   // Close or Shutdown has begun: the device takes no new work

	// Mailbox is how many messages wait for the actor now; InFlight how many stream
	// operations were sent and have not completed (queued or running on the GPU).
	Mailbox  int
	InFlight int64
	// Sent counts the stream operations sent so far, Failed those that completed with an
	// error, and Cancelled apart from them those that ended with their caller's context
	// (context.Canceled or DeadlineExceeded: refused or abandoned because the caller left),
	// which say nothing of the device's health. Latency is the time of all of them from send
	// to completion (the GPU passing them, or their failure).
	Sent, Failed, Cancelled uint64
	Latency                 Latency

	// Actor is the actor's counters: messages handled, and its time busy, spinning (which
	// keeps a CPU busy) and parked.
	Actor actor.Stats
	// Tracker is the completion tracking's work (docs/design/tracker.md).
	Tracker TrackerStats

	Memory  Usage        // what gpuactor allocated, by kind, against WithMemoryLimit
	Staging StagingStats // the pinned staging pool of copies of Go slices
	// KernelCache counts the compiled-kernel cache's hits, misses, writes and evictions.
	KernelCache KernelCacheStats
}

// TrackerStats counts the completion tracking's work since the device opened: how many times
// it polled, watermarks it recorded and asked about, and futures it completed. Completed per
// watermark says how many operations shared one. WaiterQueries and WaiterCompleted count the
// queries callers' Awaits made of those watermarks themselves, and the futures they completed
// before the tracker did (ActorTuning.WaiterQuery); Completed counts those too.
type TrackerStats struct {
	Polls, Watermarks, Queries, Completed uint64
	WaiterQueries, WaiterCompleted        uint64
}

// StagingStats is a snapshot of a device's staging pool (WithStagingLimit).
type StagingStats struct {
	PinnedBytes uint64 // pinned for staging so far (kept until the device closes)
	InUseBytes  uint64 // lent to copies in progress
	LimitBytes  uint64 // WithStagingLimit, in whole slots
	Waits       uint64 // copies that found every slot lent and waited for one
	Waiting     int    // copies waiting for a slot now
}

// Latency is a histogram of operation latencies in power-of-two buckets.
type Latency struct {
	Count   uint64
	Sum     time.Duration
	Buckets []LatencyBucket // the non-empty buckets, shortest first
}

// LatencyBucket counts the latencies from half of UpTo up to (not including) UpTo.
type LatencyBucket struct {
	UpTo  time.Duration
	Count uint64
}

// Mean is the mean latency, or 0 with none.
func (l Latency) Mean() time.Duration {
	if l.Count == 0 {
		return 0
	}
	return l.Sum / time.Duration(l.Count)
}

// Quantile is the latency under which a fraction q (0 to 1) of the operations fell, read off
// the histogram: interpolated within its bucket, so within a factor of two of the truth.
// 0 with no operations.
func (l Latency) Quantile(q float64) time.Duration {
	if l.Count == 0 || math.IsNaN(q) {
		return 0
	}
	rank := min(max(q, 0), 1) * float64(l.Count)
	var seen float64
	for _, b := range l.Buckets {
		c := float64(b.Count)
		if seen+c >= rank {
			lo := float64(b.UpTo / 2)
			return time.Duration(lo + (float64(b.UpTo)-lo)*max(0, rank-seen)/c)
		}
		seen += c
	}
	return l.Buckets[len(l.Buckets)-1].UpTo
}

// Stats takes a snapshot of the device without waiting: safe from any goroutine, at any
// time, before and after Close. Every figure is kept by the code that changes it, so the
// snapshot takes no lock and sends nothing to the actor; the figures are each current, not
// taken at one instant together, except Memory, which is one reading of its own (see Usage).
// MemInfo, which asks the runtime, is separate.
func (d *Device) Stats() Stats {
	if d == nil {
		return Stats{Ordinal: -1, Closed: true, Failure: "nil device"}
	}
	c := d.core()
	ops := c.OpStats()
	st := Stats{
		Ordinal:   d.Ordinal(),
		Backend:   d.Backend(),
		Isolated:  d.Isolated(),
		Closed:    c.Closed(),
		InFlight:  ops.InFlight,
		Sent:      ops.Sent,
		Failed:    ops.Failed,
		Cancelled: ops.Cancelled,
		Latency:   Latency{Sum: ops.Sum},
		Actor:     c.ActorStats(),
		Tracker:   TrackerStats(c.TrackerStats()),
		Memory:    d.usage(),
		Staging:   StagingStats(c.Staging().Stats()),
	}
	if inf, ok := c.Info().(*info); ok {
		st.KernelCache = inf.cache.stats()
	}
	if err := c.Err(); err != nil {
		st.Failure = err.Error()
	}
	st.Mailbox = st.Actor.Mailbox
	for i, n := range ops.Buckets {
		if n > 0 {
			st.Latency.Count += n
			st.Latency.Buckets = append(st.Latency.Buckets, LatencyBucket{UpTo: latencyBound(i), Count: n})
		}
	}
	return st
}

// latencyBound is bucket i's upper bound: 2^i ns, and for the last bucket, which holds
// everything longer, the longest duration.
func latencyBound(i int) time.Duration {
	if i >= core.LatencyBuckets-1 {
		return math.MaxInt64
	}
	return time.Duration(1) << i
}
