package group

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
)

// A job's states: queued on a member, running on one of its streams, or ended.
const (
	jobQueued int32 = iota
	jobMoving       // queued, being moved to another member
	jobRunning
	jobEnded
)

type job struct {
	g     *Group
	fn    Job
	ctx   context.Context
	cfg   jobConfig
	p     *actor.Promise[struct{}]
	state atomic.Int32
	on    atomic.Pointer[member] // where it is queued or running
	stop  func() bool            // stops the context watch
	tries int                    // runs so far: an Idempotent job moves after its device failed
	token bool                   // it holds one of g.tokens: queued by Submit, not a rerun
}

// releaseToken gives back j's room in the queue, if it holds one.
func (j *job) releaseToken() {
	if j.token {
		j.token = false
		<-j.g.tokens
	}
}

// Submit places job on a device and returns a future that completes with the job's error once
// it has run, or with why it could not: ctx ended while it waited for room or in the queue
// (ctx's error, at once), the group closed (device.ErrClosed), no device can take it
// (ErrNoDevice, ErrTooBig), the queue was full with WithFailFast (ErrQueueFull). A job that
// panics fails with an *actor.PanicError; the group goes on.
//
// The future completes with ctx's error only for a job that never started. Once the job has
// started, ctx ending is the job's to see (through its own ctx), and the future completes
// with what the job returns. Waiting on the future with a context that ends is another
// matter: Wait then returns that context's error at once, whether or not the job runs. To
// learn the job's outcome after ctx ends, wait with context.WithoutCancel(ctx), as Do does:
// the wait is short for a job still queued, whose future completes with ctx's error at once.
func (g *Group) Submit(ctx context.Context, fn Job, opts ...JobOption) *actor.Future[struct{}] {
	return g.submit(ctx, fn, opts, nil)
}

// submit is Submit, telling done (when not nil) of the job's result as it completes, refused
// at once or not.
func (g *Group) submit(ctx context.Context, fn Job, opts []JobOption, done actor.Completer[struct{}]) *actor.Future[struct{}] {
	fail := func(err error) *actor.Future[struct{}] {
		if done != nil {
			done.Completed(struct{}{}, err)
		}
		return actor.Completed(struct{}{}, err)
	}
	if fn == nil {
		return fail(fmt.Errorf("%w: a nil job", device.ErrInvalidArgument))
	}
	j := &job{g: g, fn: fn, ctx: ctx}
	for _, o := range opts {
		o(&j.cfg)
	}
	return g.queue(j, done)
}

// queue queues j, made by Submit or Do (which may have run it already: tries counts those
// runs), and returns its future, telling done (when not nil) of its result.
func (g *Group) queue(j *job, done actor.Completer[struct{}]) *actor.Future[struct{}] {
	ctx := j.ctx
	j.p = actor.NewPromise[struct{}]()
	if done != nil {
		j.p.OnComplete(done)
	}
	fail := func(err error) *actor.Future[struct{}] {
		j.p.Complete(struct{}{}, err)
		return j.p.Future()
	}
	if j.cfg.bytes > 0 && !g.fits(j.cfg.bytes) {
		return fail(fmt.Errorf("%w: %d bytes", ErrTooBig, j.cfg.bytes))
	}
	if err := g.takeToken(ctx); err != nil {
		return fail(err)
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closing {
		<-g.tokens
		return fail(fmt.Errorf("group closed: %w", device.ErrClosed))
	}
	m, shared := g.place(j)
	if m == nil && !shared {
		<-g.tokens
		return fail(ErrNoDevice)
	}
	j.token = true
	g.enqueue(j, m, true)
	return j.p.Future()
}

// takeToken takes room in the queue: at once with WithFailFast, else waiting within ctx.
func (g *Group) takeToken(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case g.tokens <- struct{}{}:
		return nil
	default:
	}
	if g.cfg.failFast {
		return fmt.Errorf("%w: %d jobs waiting", ErrQueueFull, g.cfg.queue)
	}
	select {
	case g.tokens <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fits reports whether some healthy or restarting device could ever hold bytes declared by
// one job.
func (g *Group) fits(bytes int64) bool {
	for _, m := range g.members {
		if m.live() && bytes <= m.cur.Load().memBytes {
			return true
		}
	}
	return false
}

// enqueue queues j on m, or on the shared queue when m is nil. Every queue has room for every
// job that can be queued at once (g.room), so the send never waits. With watch, j's context
// ending while it waits ends it (cancelQueued): the watch starts once j's counts are up and
// before the send, so that a context that has already ended takes back the counts just
// added, and a worker that takes j finds its stop set.
func (g *Group) enqueue(j *job, m *member, watch bool) {
	j.on.Store(m)
	if m == nil {
		g.waiting.Add(1)
	} else {
		m.queued.Add(1)
		m.reserved.Add(j.cfg.bytes)
	}
	if watch {
		j.stop = context.AfterFunc(j.ctx, j.cancelQueued)
	}
	if m == nil {
		g.shared <- j
	} else {
		m.queue <- j
	}
}

// dequeued takes j's counts off the queue it waited in.
func (j *job) dequeued() {
	if m := j.on.Load(); m != nil {
		m.queued.Add(-1)
		m.reserved.Add(-j.cfg.bytes)
	} else {
		j.g.waiting.Add(-1)
	}
}

// cancelQueued ends a job whose context ended while it was queued: its future fails at once
// and its room in the queue is free; the worker that dequeues it later skips it.
func (j *job) cancelQueued() {
	if !j.state.CompareAndSwap(jobQueued, jobEnded) {
		return
	}
	j.dequeued()
	j.releaseToken()
	j.p.Complete(struct{}{}, j.ctx.Err())
}

// refuse ends a queued job with err (the group closed, or no device left), unless it ended.
func (j *job) refuse(err error) {
	if !j.state.CompareAndSwap(jobQueued, jobEnded) {
		return
	}
	j.stop()
	j.dequeued()
	j.releaseToken()
	j.p.Complete(struct{}{}, err)
}

// refuseAll fails every job waiting in q: the group is closing.
func refuseAll(q chan *job) { refuseAllWith(q, fmt.Errorf("group closed: %w", device.ErrClosed)) }

// refuseAllWith fails every job waiting in q with err.
func refuseAllWith(q chan *job, err error) {
	for {
		select {
		case j := <-q:
			j.refuse(err)
		default:
			return
		}
	}
}
