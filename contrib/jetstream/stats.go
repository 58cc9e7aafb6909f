package jetstream

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// HandlerStats counts the jobs of one handler on one worker.
type HandlerStats struct {
	Done    uint64 // ran and their results went out
	Failed  uint64 // failed with a Permanent error, to their clients
	Retried uint64 // failed and were handed back for another attempt
	Dead    uint64 // out of attempts, sent to the dead-letter subject
	Refused uint64 // never ran: input over the limit, deadline passed, not a job
	// MeanRun and MaxRun are the mean and longest times jobs ran on the group.
	MeanRun, MaxRun time.Duration
}

// Stats is a snapshot of a worker.
type Stats struct {
	Worker   string
	Running  int64 // jobs taken off the queue and not settled yet
	Capacity int64 // jobs the group can run at once now: its healthy devices' streams
	Handlers map[string]HandlerStats
}

// QueueStats is what the server says of one handler's jobs.
type QueueStats struct {
	Pending     uint64 // queued, not yet taken by a worker
	AckPending  int    // taken by workers, not settled
	Redelivered int    // taken again after a worker went silent or handed them back
}

type workerStats struct{ handlers map[string]*handlerStats }

type handlerStats struct {
	done, failed, retried, dead, refused, runs atomic.Uint64
	busy, longest                              atomic.Int64
}

func (s *workerStats) of(name string) *handlerStats { return s.handlers[name] }

func (h *handlerStats) observe(d time.Duration) {
	h.runs.Add(1)
	h.busy.Add(int64(d))
	for {
		old := h.longest.Load()
		if int64(d) <= old || h.longest.CompareAndSwap(old, int64(d)) {
			return
		}
	}
}

// Stats takes a snapshot of the worker's counts, without waiting.
func (w *Worker) Stats() Stats {
	out := Stats{Worker: w.name, Running: w.inflight.Load(), Capacity: w.capacity(), Handlers: map[string]HandlerStats{}}
	for name, h := range w.stats.handlers {
		hs := HandlerStats{
			Done: h.done.Load(), Failed: h.failed.Load(), Retried: h.retried.Load(), Dead: h.dead.Load(),
			Refused: h.refused.Load(), MaxRun: time.Duration(h.longest.Load()),
		}
		if n := h.runs.Load(); n > 0 {
			hs.MeanRun = time.Duration(h.busy.Load() / int64(n))
		}
		out.Handlers[name] = hs
	}
	return out
}

// QueueStats asks the server for the pending and redelivered counts of handler's jobs; it
// returns once the server answers or ctx ends.
func (c *Conn) QueueStats(ctx context.Context, handler string) (QueueStats, error) {
	cons, err := c.js.Consumer(ctx, c.subj.jobStream(), c.subj.consumer(handler))
	if err != nil {
		return QueueStats{}, fmt.Errorf("jetstream: no worker consumer for handler %q: %w", handler, err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return QueueStats{}, fmt.Errorf("jetstream: consumer of handler %q: %w", handler, err)
	}
	return QueueStats{Pending: info.NumPending, AckPending: info.NumAckPending, Redelivered: info.NumRedelivered}, nil
}
