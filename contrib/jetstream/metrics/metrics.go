// Package metrics exports a JetStream worker's figures to Prometheus: its per-handler job
// counts and run times (Worker.Stats), and the queue's pending and redelivered counts of each
// handler (Conn.QueueStats). It is a package of its own so that a worker that does not export
// metrics does not link the Prometheus client.
package metrics

import (
	"context"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/gpuactor/gpuactor/contrib/jetstream"
)

// Collector is a prometheus.Collector of one worker; every scrape reads Worker.Stats and asks
// the server for the queue's counts (within 2 seconds; a server that does not answer leaves
// those series out of the scrape).
type Collector struct {
	w    *jetstream.Worker
	conn *jetstream.Conn

	capacity, running                    *prom.Desc
	done, failed, retried, dead, refused *prom.Desc
	meanRun, maxRun                      *prom.Desc
	pending, ackPending, redelivered     *prom.Desc
}

// NewCollector returns a collector of w, whose queue is on conn. Register it once.
func NewCollector(w *jetstream.Worker, conn *jetstream.Conn) *Collector {
	worker := []string{"worker"}
	handler := []string{"worker", "handler"}
	d := func(name, help string, labels []string) *prom.Desc {
		return prom.NewDesc("gpuactor_jetstream_"+name, help, labels, nil)
	}
	return &Collector{
		w: w, conn: conn,
		capacity:    d("capacity", "Jobs the worker's group can run at once: its healthy devices' streams.", worker),
		running:     d("jobs_running", "Jobs the worker took off the queue and has not settled.", worker),
		done:        d("jobs_done_total", "Jobs that ran and whose results went out.", handler),
		failed:      d("jobs_failed_total", "Jobs that failed with a permanent error.", handler),
		retried:     d("jobs_retried_total", "Jobs that failed and were handed back for another attempt.", handler),
		dead:        d("jobs_dead_total", "Jobs out of attempts, sent to the dead-letter subject.", handler),
		refused:     d("jobs_refused_total", "Jobs that never ran: input over the limit, deadline passed.", handler),
		meanRun:     d("job_run_mean_seconds", "Mean time jobs ran on the group.", handler),
		maxRun:      d("job_run_max_seconds", "Longest time a job ran on the group.", handler),
		pending:     d("queue_pending", "Jobs queued for the handler, taken by no worker yet.", []string{"handler"}),
		ackPending:  d("queue_ack_pending", "Jobs of the handler taken by workers and not settled.", []string{"handler"}),
		redelivered: d("queue_redelivered", "Jobs of the handler taken again after a worker went silent or handed them back.", []string{"handler"}),
	}
}

// Describe sends the descriptions of every metric the collector exports.
func (c *Collector) Describe(ch chan<- *prom.Desc) {
	for _, d := range []*prom.Desc{c.capacity, c.running, c.done, c.failed, c.retried, c.dead, c.refused,
		c.meanRun, c.maxRun, c.pending, c.ackPending, c.redelivered} {
		ch <- d
	}
}

// Collect sends the worker's metrics from one Stats snapshot, and the queue's.
func (c *Collector) Collect(ch chan<- prom.Metric) {
	st := c.w.Stats()
	ch <- prom.MustNewConstMetric(c.capacity, prom.GaugeValue, float64(st.Capacity), st.Worker)
	ch <- prom.MustNewConstMetric(c.running, prom.GaugeValue, float64(st.Running), st.Worker)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for name, h := range st.Handlers {
		counter := func(d *prom.Desc, v uint64) {
			ch <- prom.MustNewConstMetric(d, prom.CounterValue, float64(v), st.Worker, name)
		}
		counter(c.done, h.Done)
		counter(c.failed, h.Failed)
		counter(c.retried, h.Retried)
		counter(c.dead, h.Dead)
		counter(c.refused, h.Refused)
		ch <- prom.MustNewConstMetric(c.meanRun, prom.GaugeValue, h.MeanRun.Seconds(), st.Worker, name)
		ch <- prom.MustNewConstMetric(c.maxRun, prom.GaugeValue, h.MaxRun.Seconds(), st.Worker, name)
		q, err := c.conn.QueueStats(ctx, name)
		if err != nil {
			continue
		}
		ch <- prom.MustNewConstMetric(c.pending, prom.GaugeValue, float64(q.Pending), name)
		ch <- prom.MustNewConstMetric(c.ackPending, prom.GaugeValue, float64(q.AckPending), name)
		ch <- prom.MustNewConstMetric(c.redelivered, prom.GaugeValue, float64(q.Redelivered), name)
	}
}
