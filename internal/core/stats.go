package core

import (
	"context"
	"errors"
	"math/bits"
	"sync/atomic"
	"time"
)

// LatencyBuckets is how many buckets a latency histogram has: bucket i counts latencies of
// at least 2^(i-1) and under 2^i nanoseconds (bucket 0: under 1 ns), the last everything
// from 2^(LatencyBuckets-2) ns (about 39 hours) up.
const LatencyBuckets = 48

// opStats counts a device's stream operations: what is in flight, and how long each took
// from its send to its completion. Written by senders and by the completing goroutine (the
// actor, mostly), read by Stats without a lock.
type opStats struct {
	epoch    time.Time // the origin of clock
	inflight atomic.Int64
	sent     atomic.Uint64
	failed   atomic.Uint64
	cancel   atomic.Uint64
	sumNs    atomic.Int64
	buckets  [LatencyBuckets]atomic.Uint64
}

// clock is the time since the device opened: one read of the monotonic clock.
func (o *opStats) clock() time.Duration { return time.Since(o.epoch) }

// done counts an operation sent at start as complete, with err.
func (o *opStats) done(start time.Duration, err error) {
	lat := max(0, o.clock()-start)
	o.inflight.Add(-1)
	switch {
	case err == nil:
	case cancelled(err):
		o.cancel.Add(1)
	default:
		o.failed.Add(1)
	}
	o.sumNs.Add(int64(lat))
	o.buckets[min(bits.Len64(uint64(lat)), LatencyBuckets-1)].Add(1)
}

// cancelled reports whether err is the end of its caller's context: an operation refused or
// abandoned because its caller left, which says nothing of the device's health.
func cancelled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// OpStats is a snapshot of a device's stream-operation counters.
type OpStats struct {
	InFlight int64  // sent and not completed
	Sent     uint64 // sent so far
	Failed   uint64 // completed with an error other than Cancelled's
	// Cancelled completed with their caller's context's error: refused or abandoned because
	// the caller left.
	Cancelled uint64
	Sum       time.Duration
	Buckets   [LatencyBuckets]uint64
}

// OpStats reads the device's operation counters.
func (d *Device) OpStats() OpStats {
	o := &d.ops
	s := OpStats{InFlight: o.inflight.Load(), Sent: o.sent.Load(), Failed: o.failed.Load(), Cancelled: o.cancel.Load(), Sum: time.Duration(o.sumNs.Load())}
	for i := range o.buckets {
		s.Buckets[i] = o.buckets[i].Load()
	}
	return s
}

// Closed reports whether the device's Close (or Shutdown) has begun.
func (d *Device) Closed() bool { return d == nil || d.act.Closed() }
