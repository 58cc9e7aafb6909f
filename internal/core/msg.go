package core

import (
	"context"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/nvtx"
)

// Future is the future of a stream-ordered operation: it completes when the GPU has passed the
// operation, or with the error that kept it from being queued or run.
type Future = actor.Future[struct{}]

// Op is a stream-ordered operation: Enqueue queues its work on the stream whose handle it is
// given, on the device's actor thread. The device's own stream is just another handle.
type Op interface {
	Enqueue(rt backend.Device, tr *Tracker, h backend.Stream) error
}

// Msg is the message part of an Op: its promise (and so its mailbox entry), its stream and how
// it completes. A public package's operation type embeds a Msg beside its arguments, so that
// an operation is one object: the actor thread reads only memory the caller wrote once, where
// a closure per layer costs a cache miss per layer. The future keeps the whole object alive
// while a caller holds it.
type Msg struct {
	p     actor.Promise[struct{}]
	s     *Stream
	t     Tracking
	self  Op
	start time.Duration         // when it was sent, on the device's clock
	rng   string                // the NVTX range it runs in (its ctx's, while a tool is attached); "" for none
	wm    atomic.Pointer[wmark] // the watermark that covers it, for its waiters to probe (waiterquery.go)
	// finished: Enqueue did the operation's work itself, the GPU having passed everything it
	// waits for (Finished).
	finished bool
}

// Finished says, from the operation's Enqueue, that its work is done already: it ran on the
// actor thread after the GPU had drained the stream (Tracker.Drained), as a free of memory
// whose last use has completed does. Its future then completes as Enqueue returns (through
// Tracking.Then, given nil), with no watermark to wait for.
func (m *Msg) Finished() { m.finished = true }

// Tracking says how an operation's future completes. The zero value completes it when the GPU
// has passed the operation, sharing a watermark with its neighbours.
type Tracking struct {
	// Then, when set, turns the GPU's result into the future's, on the actor thread once the
	// GPU has passed the operation. It must be brief and must not wait.
	Then func(error) error
	// Reroute runs the operation, when its stream was closed after it was sent, on the
	// device's own stream once the GPU has passed every stream's work (the closed stream's
	// included), rather than refusing it: for a release that must happen whatever became of
	// the stream (a buffer's free).
	Reroute bool
	// Marked asks for a watermark of the operation's own: for one whose completion frees
	// something a caller waits for (a staging slot), and whose length dwarfs a watermark's.
	Marked bool
	// Queued completes the future once the work is queued, untracked: for the leading parts
	// of one operation sent as several messages, whose last part is tracked.
	Queued bool
	// Done, when set, runs once the future completes, by whatever route (the GPU passed the
	// operation, it failed to queue, the device closed, Submit refused it), on the completing
	// goroutine before any waiter wakes: for giving back what the operation held (a staging
	// slot). It must be brief and must not wait.
	Done func(error)
}

// Submit sends self, whose embedded Msg is m, to run on s, completed as t says. A closed
// stream is refused. m must be fresh: one submitted before is refused with
// actor.ErrFutureReused, and left as it was.
func Submit(ctx context.Context, s *Stream, m *Msg, self Op, t Tracking) *Future {
	if s == nil {
		return refused(t, Invalid("operation on a nil stream"))
	}
	if m.s != nil {
		return refused(t, actor.ErrFutureReused)
	}
	m.s, m.self, m.t = s, self, t
	m.rng = nvtx.Named(ctx)
	o := &s.dev.ops
	m.start = o.clock()
	o.sent.Add(1)
	o.inflight.Add(1)
	s.inflight.Add(1)
	if s.dev.anyq != nil && t.probed() {
		m.p.OnCompleteProbed((*msgTask)(m)) // its waiters may ask its watermark (waiterquery.go)
	} else {
		m.p.OnComplete((*msgTask)(m))
	}
	return actor.CallTask(ctx, s.dev.act, &m.p, actor.Task[struct{}]((*msgTask)(m)))
}

// refused is the completed future of an operation Submit refuses, t.Done run.
func refused(t Tracking, err error) *Future {
	if t.Done != nil {
		t.Done(err)
	}
	return actor.Completed(struct{}{}, err)
}

// Queue sends op, given as a function, to run on s; the future completes when the GPU has
// passed its work.
func Queue(ctx context.Context, s *Stream, op func(rt backend.Device, tr *Tracker, h backend.Stream) error) *Future {
	return QueueTracked(ctx, s, op, Tracking{})
}

// QueueTracked is Queue completed as t says.
func QueueTracked(ctx context.Context, s *Stream, op func(rt backend.Device, tr *Tracker, h backend.Stream) error, t Tracking) *Future {
	o := &funcOp{op: op}
	return Submit(ctx, s, &o.Msg, o, t)
}

// funcOp is an operation given as a function.
type funcOp struct {
	Msg
	op func(rt backend.Device, tr *Tracker, h backend.Stream) error
}

func (o *funcOp) Enqueue(rt backend.Device, tr *Tracker, h backend.Stream) error {
	op := o.op
	o.op = nil // the caller may hold the future long after; op's captures need not live as long
	return op(rt, tr, h)
}

// msgTask is a Msg as the actor runs it, without Run in Msg's own API.
type msgTask Msg

func (m *msgTask) Run(p *actor.Promise[struct{}]) (struct{}, error) {
	if m.rng != "" {
		nvtx.Push(m.rng)
		defer nvtx.Pop()
	}
	s := m.s
	tr := s.dev.tracker
	if err := s.alive(); err != nil {
		if !m.t.Reroute || s.own {
			return struct{}{}, err
		}
		own := s.dev.stream
		tr.AfterAll(func(err error) {
			if err == nil {
				err = m.self.Enqueue(s.dev.rt, tr, own.h)
			}
			if err != nil {
				p.Complete(struct{}{}, err)
				return
			}
			m.track(tr, own.h, p)
		})
		return struct{}{}, actor.ErrPending
	}
	if err := m.self.Enqueue(s.dev.rt, tr, s.h); err != nil {
		return struct{}{}, err
	}
	m.track(tr, s.h, p)
	return struct{}{}, actor.ErrPending
}

// Completed counts the operation as complete and runs its Tracking.Done: on the goroutine
// that completes its future, before its waiters wake.
func (m *msgTask) Completed(_ struct{}, err error) {
	m.s.dev.ops.done(m.start, err)
	m.s.inflight.Add(-1)
	if done := m.t.Done; done != nil {
		done(err)
	}
}

// track arranges for p to complete as the operation's Tracking says, its work queued on h.
func (m *msgTask) track(tr *Tracker, h backend.Stream, p *actor.Promise[struct{}]) {
	switch t := &m.t; {
	case m.finished:
		if t.Then != nil {
			p.Complete(struct{}{}, callThen(t.Then, nil))
		} else {
			p.Complete(struct{}{}, nil)
		}
	case t.Queued:
		p.Complete(struct{}{}, nil)
	case t.Then != nil:
		then := t.Then
		tr.afterFor(h, p, func(err error) {
			if p.Future().Ready() {
				return // failed by a shutdown's abort: its caller has moved on, then must not act
			}
			p.Complete(struct{}{}, callThen(then, err))
		}, t.Marked)
	case t.Marked:
		tr.afterFor(h, p, func(err error) { p.Complete(struct{}{}, err) }, true)
	case m.s.dev.anyq != nil && h == m.s.h: // not rerouted: its waiters may probe
		tr.afterProbed(h, p, &m.wm)
	default:
		tr.AfterPromise(h, p)
	}
}

// callThen runs then; a panic in it becomes the future's error (*actor.PanicError), where it
// would otherwise unwind through the tracker and leave the stream's later futures hanging.
func callThen(then func(error) error, err error) (out error) {
	defer func() {
		if r := recover(); r != nil {
			out = &actor.PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return then(err)
}
