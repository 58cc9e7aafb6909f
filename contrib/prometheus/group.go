package prometheus

import (
	"strconv"

	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/gpuactor/gpuactor/group"
)

// GroupCollector is a prometheus.Collector of a group (package group): on every scrape it
// reads Group.Stats, so it follows the group's devices as they are now. A device that a
// restart (group.WithRestart) replaced is exported in its place, under the same device label,
// with gpuactor_group_restarts_total counting the replacements; the new device's own counters
// (gpuactor_operations_sent_total and the like) start again from zero, which Prometheus's
// rate and increase read as a counter reset. It exports, for each device, what Collector does
// and the group's figures for it (healthy, restarts, jobs queued, running, done and failed,
// memory for jobs), and the group's count of jobs waiting for any device.
type GroupCollector struct {
	g *group.Group
	d descs
	// The group's own metrics: per device, and the group's waiting count.
	healthy, restarts, queued, running, done, failed *prom.Desc
	retries                                          *prom.Desc
	memBytes, memReserved, waiting                   *prom.Desc
}

// NewGroupCollector returns a collector of g, which must not be nil. Register it once, for
// the group's life; after Close, scrapes show the devices as Close left them. The group's devices must have distinct
// ordinals (as device.OpenAll returns them): two with one ordinal and backend would export the
// same series twice, which the registry refuses.
func NewGroupCollector(g *group.Group, opts ...Option) *GroupCollector {
	if g == nil {
		panic("gpuactor/contrib/prometheus: NewGroupCollector of a nil group") // as a nil registry's Register would, at once rather than on the first scrape
	}
	cfg := config{namespace: "gpuactor"}
	for _, o := range opts {
		o(&cfg)
	}
	d := func(name, help string, labels ...string) *prom.Desc {
		return prom.NewDesc(prom.BuildFQName(cfg.namespace, "group", name), help, labels, cfg.labels)
	}
	dev := []string{"device", "backend"}
	return &GroupCollector{
		g:           g,
		d:           newDescs(cfg),
		healthy:     d("healthy", "1 while the group places jobs on the device: it has not failed.", dev...),
		restarts:    d("restarts_total", "Devices that replaced a failed one in this place (group.WithRestart).", dev...),
		queued:      d("jobs_queued", "Jobs placed on the device, waiting for one of its streams.", dev...),
		running:     d("jobs_running", "Jobs running on the device now.", dev...),
		done:        d("jobs_done_total", "Jobs that ended without an error on the device, over its restarts.", dev...),
		failed:      d("jobs_failed_total", "Jobs that ended with an error on the device, over its restarts.", dev...),
		retries:     d("job_retries_total", "Runs of idempotent jobs that the device's failure ended and that ran again elsewhere (not in done or failed).", dev...),
		memBytes:    d("memory_bytes", "Device memory the jobs on the device may declare at once (group.Bytes).", dev...),
		memReserved: d("memory_reserved_bytes", "Device memory the jobs placed on the device declared.", dev...),
		waiting:     d("jobs_waiting", "Jobs placed on no device yet, waiting for the first free stream of any."),
	}
}

// Describe sends the descriptions of every metric the GroupCollector exports.
func (c *GroupCollector) Describe(ch chan<- *prom.Desc) {
	c.d.describe(ch)
	for _, d := range []*prom.Desc{c.healthy, c.restarts, c.queued, c.running, c.done, c.failed, c.retries, c.memBytes, c.memReserved, c.waiting} {
		ch <- d
	}
}

// Collect sends the group's metrics and every device's, from one Group.Stats snapshot.
func (c *GroupCollector) Collect(ch chan<- prom.Metric) {
	st := c.g.Stats()
	ch <- prom.MustNewConstMetric(c.waiting, prom.GaugeValue, float64(st.Waiting))
	for _, ds := range st.Devices {
		lv := []string{strconv.Itoa(ds.Device.Ordinal), string(ds.Device.Backend)}
		gauge := func(d *prom.Desc, v float64) { ch <- prom.MustNewConstMetric(d, prom.GaugeValue, v, lv...) }
		counter := func(d *prom.Desc, v float64) { ch <- prom.MustNewConstMetric(d, prom.CounterValue, v, lv...) }
		healthy := 0.0
		if ds.Healthy {
			healthy = 1
		}
		gauge(c.healthy, healthy)
		counter(c.restarts, float64(ds.Restarts))
		gauge(c.queued, float64(ds.Queued))
		gauge(c.running, float64(ds.Running))
		counter(c.done, float64(ds.Done))
		counter(c.failed, float64(ds.Failed))
		counter(c.retries, float64(ds.Retries))
		gauge(c.memBytes, float64(ds.MemoryBytes))
		gauge(c.memReserved, float64(ds.MemoryReserved))
		c.d.collect(ch, ds.Device)
	}
}
