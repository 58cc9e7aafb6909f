package prometheus

import (
	"strconv"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/gpuactor/gpuactor/device"
)

// Collector is a prometheus.Collector of the Stats of a fixed set of devices. Every metric
// carries the labels device (the ordinal) and backend (cuda or sim, as Device.Backend names
// it); gpuactor_device_info tells an isolated device (Device.Isolated) apart. For the devices
// of a group, which a restart replaces, use NewGroupCollector.
type Collector struct {
	devs []*device.Device
	d    descs
}

// Option configures New and NewGroupCollector.
type Option func(*config)

type config struct {
	namespace string
	labels    prom.Labels
}

// WithNamespace sets the metric names' prefix; the default is "gpuactor".
func WithNamespace(ns string) Option { return func(c *config) { c.namespace = ns } }

// WithConstLabels adds labels with fixed values to every metric, e.g. the service's name.
func WithConstLabels(l prom.Labels) Option { return func(c *config) { c.labels = l } }

// New returns a Collector of devs' Stats. Register it once; the devices may be closed later
// (their last figures stay visible, with up at 0). devs must be distinct devices (as OpenAll
// returns them): two with one ordinal and backend would export the same series twice, which
// the registry refuses.
func New(devs []*device.Device, opts ...Option) *Collector {
	cfg := config{namespace: "gpuactor"}
	for _, o := range opts {
		o(&cfg)
	}
	return &Collector{devs: append([]*device.Device(nil), devs...), d: newDescs(cfg)}
}

// descs are the metrics' descriptions, made once.
type descs struct {
	info, up, mailbox, inFlight, sent, failed, latency                  *prom.Desc
	cancelled                                                           *prom.Desc
	actorMessages, actorSeconds, actorPanics, actorParks, actorHandOffs *prom.Desc
	memBytes, memCount, memLimit                                        *prom.Desc
	stagingPinned, stagingInUse, stagingLimit                           *prom.Desc
	stagingWaits, stagingWaiting                                        *prom.Desc
	trackerPolls, trackerMarks, trackerQueries                          *prom.Desc
	trackerCompleted                                                    *prom.Desc
	kernelCache                                                         *prom.Desc
}

func newDescs(cfg config) descs {
	labels := []string{"device", "backend"}
	d := func(name, help string, extra ...string) *prom.Desc {
		return prom.NewDesc(prom.BuildFQName(cfg.namespace, "", name), help, append(labels[:2:2], extra...), cfg.labels)
	}
	return descs{
		info:           d("device_info", "Always 1: the device's labels, and isolated: whether it runs in a worker process of its own.", "isolated"),
		up:             d("up", "1 while the device takes work; 0 once it failed or closed."),
		mailbox:        d("mailbox_messages", "Messages waiting for the device's actor."),
		inFlight:       d("operations_in_flight", "Stream operations sent and not yet completed."),
		sent:           d("operations_sent_total", "Stream operations sent."),
		failed:         d("operations_failed_total", "Stream operations that completed with an error, those whose caller's context ended apart."),
		cancelled:      d("operations_cancelled_total", "Operations refused or ended because their caller's context ended."),
		latency:        d("operation_latency_seconds", "Time from an operation's send to its completion on the GPU."),
		actorMessages:  d("actor_messages_total", "Mailbox messages the device's actor ran."),
		actorSeconds:   d("actor_seconds_total", "The actor's time by state: busy running messages, spinning (a CPU kept busy) or parked.", "state"),
		actorPanics:    d("actor_panics_total", "Operations that panicked and were recovered."),
		actorParks:     d("actor_parks_total", "Times the actor parked instead of spinning."),
		actorHandOffs:  d("actor_handoffs_total", "Times the actor yielded its thread's P to goroutines it had woken."),
		memBytes:       d("memory_bytes", "Memory gpuactor allocated and has not freed, by kind.", "kind"),
		memCount:       d("memory_allocations", "Allocations gpuactor made and has not freed, by kind.", "kind"),
		memLimit:       d("memory_limit_bytes", "The cap on device memory (WithMemoryLimit); 0 for none."),
		stagingPinned:  d("staging_pinned_bytes", "Pinned memory held by the staging pool."),
		stagingInUse:   d("staging_in_use_bytes", "Staging memory lent to copies in progress."),
		stagingLimit:   d("staging_limit_bytes", "The staging pool's cap (WithStagingLimit)."),
		stagingWaits:   d("staging_waits_total", "Copies that found the staging pool exhausted and waited."),
		stagingWaiting: d("staging_waiting", "Copies waiting for a staging slot now."),
		trackerPolls:   d("tracker_polls_total", "Times the completion tracking polled the GPU's progress."),
		trackerMarks:   d("tracker_watermarks_total", "Events the completion tracking recorded to mark progress."),
		trackerQueries: d("tracker_queries_total", "Event queries the completion tracking made."),
		trackerCompleted: d("tracker_completed_total",
			"Futures the completion tracking completed; per watermark, how many operations shared one."),
		kernelCache: d("kernel_cache_total",
			"The compiled-kernel cache's work, by event: hit, miss, write, or eviction under WithKernelCacheLimit.", "event"),
	}
}

// Describe sends the descriptions of every metric the Collector exports.
func (c *Collector) Describe(ch chan<- *prom.Desc) { c.d.describe(ch) }

// describe sends the descriptions of every device metric.
func (ds *descs) describe(ch chan<- *prom.Desc) {
	for _, d := range []*prom.Desc{
		ds.info, ds.up, ds.mailbox, ds.inFlight, ds.sent, ds.failed, ds.cancelled, ds.latency,
		ds.actorMessages, ds.actorSeconds, ds.actorPanics, ds.actorParks, ds.actorHandOffs,
		ds.memBytes, ds.memCount, ds.memLimit,
		ds.stagingPinned, ds.stagingInUse, ds.stagingLimit, ds.stagingWaits, ds.stagingWaiting,
		ds.trackerPolls, ds.trackerMarks, ds.trackerQueries, ds.trackerCompleted,
		ds.kernelCache,
	} {
		ch <- d
	}
}

// Collect sends every device's metrics, from one Stats snapshot each.
func (c *Collector) Collect(ch chan<- prom.Metric) {
	for _, dev := range c.devs {
		c.d.collect(ch, dev.Stats())
	}
}

// collect sends one device's metrics, from st.
func (ds *descs) collect(ch chan<- prom.Metric, st device.Stats) {
	lv := []string{strconv.Itoa(st.Ordinal), string(st.Backend)}
	gauge := func(d *prom.Desc, v float64, extra ...string) {
		ch <- prom.MustNewConstMetric(d, prom.GaugeValue, v, append(lv[:2:2], extra...)...)
	}
	counter := func(d *prom.Desc, v float64, extra ...string) {
		ch <- prom.MustNewConstMetric(d, prom.CounterValue, v, append(lv[:2:2], extra...)...)
	}
	gauge(ds.info, 1, strconv.FormatBool(st.Isolated))
	up := 1.0
	if st.Closed || st.Failure != "" {
		up = 0
	}
	gauge(ds.up, up)
	gauge(ds.mailbox, float64(st.Mailbox))
	gauge(ds.inFlight, float64(st.InFlight))
	counter(ds.sent, float64(st.Sent))
	counter(ds.failed, float64(st.Failed))
	counter(ds.cancelled, float64(st.Cancelled))
	count, sum, buckets := histogram(st.Latency)
	ch <- prom.MustNewConstHistogram(ds.latency, count, sum, buckets, lv...)

	a := st.Actor
	counter(ds.actorMessages, float64(a.Messages))
	counter(ds.actorSeconds, a.Busy.Seconds(), "busy")
	counter(ds.actorSeconds, a.Spin.Seconds(), "spin")
	counter(ds.actorSeconds, a.Park.Seconds(), "park")
	counter(ds.actorPanics, float64(a.Panics))
	counter(ds.actorParks, float64(a.Parks))
	counter(ds.actorHandOffs, float64(a.HandOffs))

	m := st.Memory
	for _, k := range []struct {
		kind string
		u    device.KindUsage
	}{{"device", m.Device}, {"async", m.Async}, {"pinned", m.Pinned}, {"registered", m.Registered}, {"managed", m.Managed}, {"imported", m.Imported}} {
		gauge(ds.memBytes, float64(k.u.Bytes), k.kind)
		gauge(ds.memCount, float64(k.u.Count), k.kind)
	}
	gauge(ds.memLimit, float64(m.Limit))

	s := st.Staging
	gauge(ds.stagingPinned, float64(s.PinnedBytes))
	gauge(ds.stagingInUse, float64(s.InUseBytes))
	gauge(ds.stagingLimit, float64(s.LimitBytes))
	counter(ds.stagingWaits, float64(s.Waits))
	gauge(ds.stagingWaiting, float64(s.Waiting))

	t := st.Tracker
	counter(ds.trackerPolls, float64(t.Polls))
	counter(ds.trackerMarks, float64(t.Watermarks))
	counter(ds.trackerQueries, float64(t.Queries))
	counter(ds.trackerCompleted, float64(t.Completed))

	k := st.KernelCache
	counter(ds.kernelCache, float64(k.Hits), "hit")
	counter(ds.kernelCache, float64(k.Misses), "miss")
	counter(ds.kernelCache, float64(k.Writes), "write")
	counter(ds.kernelCache, float64(k.Evictions), "eviction")
}

// The latency histogram's bucket bounds: the powers of two from about a microsecond to about
// a minute, the same on every scrape (Prometheus compares buckets across scrapes by bound).
const (
	firstBound = 10 // 2^10 ns ≈ 1 µs
	lastBound  = 36 // 2^36 ns ≈ 69 s
)

// histogram turns Stats' power-of-two buckets into Prometheus's cumulative ones. A device
// bucket holds latencies below its UpTo, so it lands in the first Prometheus bucket whose
// bound is at least UpTo; latencies past the last bound count only in +Inf (count).
func histogram(l device.Latency) (count uint64, sum float64, buckets map[float64]uint64) {
	buckets = make(map[float64]uint64, lastBound-firstBound+1)
	bounds := make([]time.Duration, 0, lastBound-firstBound+1)
	for i := firstBound; i <= lastBound; i++ {
		bounds = append(bounds, time.Duration(1)<<i)
	}
	var cum uint64
	next := 0
	for _, b := range l.Buckets {
		for next < len(bounds) && bounds[next] < b.UpTo {
			buckets[bounds[next].Seconds()] = cum
			next++
		}
		cum += b.Count
	}
	for ; next < len(bounds); next++ {
		buckets[bounds[next].Seconds()] = cum
	}
	return l.Count, l.Sum.Seconds(), buckets
}
