package group

import (
	"cmp"
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// Do runs fn as Submit would and returns its error once it has run. Where a device the policy
// allows has a free stream and no job is waiting, fn runs at once on the calling goroutine,
// which saves the two goroutine hand-offs of Submit and Wait (a few microseconds each on a
// large host); otherwise it is queued as Submit queues it, and Do waits for it. Errors are
// Submit's.
//
// Do returns ctx's error only for a job that never started: ctx ended before it left the
// queue (or while it waited for its declared Bytes). Once fn has started, Do waits for it to
// return, however long after ctx ends, and returns what it returned: fn sees ctx end and
// decides, so a caller is never told "cancelled" of work that was done.
func (g *Group) Do(ctx context.Context, fn Job, opts ...JobOption) error {
	if fn == nil {
		return fmt.Errorf("%w: a nil job", device.ErrInvalidArgument)
	}
	j := &job{g: g, fn: fn, ctx: ctx}
	for _, o := range opts {
		o(&j.cfg)
	}
	var ran error  // the error of a run that a device failure ended: fn may run again
	var on *member // where that run ended, which counts it a retry, or failed if it ends there
	for {
		if err := ctx.Err(); err != nil {
			if on != nil {
				on.failedJobs.Add(1) // it will not run again: it ended there
			}
			return cmp.Or(ran, err)
		}
		if on != nil {
			on.retried.Add(1)
		}
		m, gn, s := g.idleStream(j)
		if m == nil {
			// A queued job's future completes with ctx's error at once if ctx ends before
			// the job starts; once it runs, the job's own outcome is the answer.
			return g.queue(j, nil).Wait(context.WithoutCancel(ctx))
		}
		s = gn.lend(s)
		again, err := m.runOn(j, gn, s)
		gn.giveBack(s)
		g.inline.Done()
		if !again {
			return err
		}
		ran, on = err, m
	}
}

// idleStream takes a free stream for j, with the member and generation it belongs to, where
// running j now would overtake no queued job; nil when there is none, or the group is closing.
// The caller runs j, gives the stream back (gn.giveBack), and calls g.inline.Done.
func (g *Group) idleStream(j *job) (*member, *generation, *streams.Stream) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closing || g.waiting.Load() > 0 {
		return nil, nil, nil
	}
	try := func(m *member) (*member, *generation, *streams.Stream) {
		if m == nil || m.queued.Load() > 0 {
			return nil, nil, nil
		}
		gn := m.cur.Load()
		if !gn.healthy() || j.cfg.bytes > gn.memBytes {
			return nil, nil, nil
		}
		select {
		case s := <-gn.free:
			g.inline.Add(1)
			return m, gn, s
		default:
			return nil, nil, nil
		}
	}
	switch {
	case g.cfg.policy == RoundRobin:
		return try(g.roundRobin(j))
	case g.cfg.policy == Affinity && j.cfg.key != "":
		return try(g.affinity(j))
	case g.cfg.policy == Memory && j.cfg.bytes > 0:
		return try(g.byMemory(j))
	}
	n := len(g.members)
	start := int(g.rr.Add(1) % uint64(n)) // ties start at a different device each time
	for i := range n {
		if m, gn, s := try(g.members[(start+i)%n]); m != nil {
			return m, gn, s
		}
	}
	return nil, nil, nil
}
