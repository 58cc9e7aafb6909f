package main

import (
	"fmt"
	"io"
	"time"

	"github.com/gpuactor/gpuactor/device"
)

// deviceLoad is what one device did during the load, from its Stats before and after: the
// figures that say whether its actor was the bottleneck (busy most of the time) and how long
// its operations took from send to completion.
type deviceLoad struct {
	ordinal                        int
	elapsed                        time.Duration
	busy, spin, park               time.Duration
	messages, ops, parks, handOffs uint64
	sent                           uint64
	latency                        device.Latency // the operations sent during the load
	stagingWaits                   uint64
	polls, queries                 uint64
}

// deviceSnapshot is each device's Stats now, by device.
func deviceSnapshot(devs []*device.Device) map[*device.Device]device.Stats {
	m := make(map[*device.Device]device.Stats, len(devs))
	for _, d := range devs {
		m[d] = d.Stats()
	}
	return m
}

// deviceLoads is what each device of after did since before, over elapsed; a device that
// was not in before (a restart) counts from its start.
func deviceLoads(before, after map[*device.Device]device.Stats, elapsed time.Duration) []deviceLoad {
	var out []deviceLoad
	for d, b := range after {
		a := before[d] // zero for a device opened meanwhile
		out = append(out, deviceLoad{
			ordinal: b.Ordinal, elapsed: elapsed,
			busy: b.Actor.Busy - a.Actor.Busy, spin: b.Actor.Spin - a.Actor.Spin, park: b.Actor.Park - a.Actor.Park,
			messages: b.Actor.Messages - a.Actor.Messages, ops: b.Actor.Ops - a.Actor.Ops, parks: b.Actor.Parks - a.Actor.Parks,
			handOffs: b.Actor.HandOffs - a.Actor.HandOffs,
			sent:     b.Sent - a.Sent, latency: latencySince(a.Latency, b.Latency),
			stagingWaits: b.Staging.Waits - a.Staging.Waits,
			polls:        b.Tracker.Polls - a.Tracker.Polls, queries: b.Tracker.Queries - a.Tracker.Queries,
		})
	}
	return out
}

// latencySince is the histogram of the operations counted in b and not in a.
func latencySince(a, b device.Latency) device.Latency {
	had := map[time.Duration]uint64{}
	for _, x := range a.Buckets {
		had[x.UpTo] = x.Count
	}
	out := device.Latency{Count: b.Count - a.Count, Sum: b.Sum - a.Sum}
	for _, x := range b.Buckets {
		if n := x.Count - had[x.UpTo]; n > 0 {
			out.Buckets = append(out.Buckets, device.LatencyBucket{UpTo: x.UpTo, Count: n})
		}
	}
	return out
}

func (l deviceLoad) print(w io.Writer, requests int) {
	frac := func(d time.Duration) float64 {
		if l.elapsed <= 0 {
			return 0
		}
		return 100 * float64(d) / float64(l.elapsed)
	}
	per := 0.0
	if requests > 0 {
		per = float64(l.messages) / float64(requests)
	}
	fmt.Fprintf(w, "device %d actor: busy %.0f%%, spinning %.0f%%, parked %.0f%% (%d parks, %d hand-offs); %d messages (%.1f a request), %d stream operations\n",
		l.ordinal, frac(l.busy), frac(l.spin), frac(l.park), l.parks, l.handOffs, l.messages, per, l.sent)
	fmt.Fprintf(w, "device %d operations, send to completion: p50 %v, p99 %v, max < %v; tracker %d polls, %d queries; %d staging waits\n",
		l.ordinal, l.latency.Quantile(0.5).Round(time.Microsecond), l.latency.Quantile(0.99).Round(time.Microsecond),
		l.latency.Quantile(1).Round(time.Microsecond), l.polls, l.queries, l.stagingWaits)
}
