package streams

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Future is the result of a stream-ordered operation: it completes when the GPU reaches the
// operation (or with the error that kept it from being queued or run).
type Future = actor.Future[struct{}]

// streamOp queues work on the stream whose handle it is given, on the device's actor thread.
type streamOp = func(rt backend.Device, tr *device.Tracker, h backend.Stream) error

// enqueue queues op's work on the stream from the actor thread and returns the future the
// device's tracker completes when the GPU has passed it.
func (s *Stream) enqueue(ctx context.Context, op streamOp) *Future {
	return s.tracked(ctx, tracking{}, op)
}

// tracking says how a tracked op's future completes: marked asks for a watermark of the op's
// own (Tracker.AfterMarked); then, when set, turns the GPU's result into the future's; queued
// completes it once the op's work is queued, with no tracking at all (SubmitQueued).
type tracking struct {
	marked, queued bool
	then           func(error) error
}

// tracked is enqueue, completed as t says.
func (s *Stream) tracked(ctx context.Context, t tracking, op streamOp) *Future {
	o := &funcOp{op: op}
	o.t = t
	return Submit(ctx, s, &o.Op, o)
}

// funcOp is a stream operation given as a function.
type funcOp struct {
	Op
	op streamOp
}

func (o *funcOp) EnqueueOn(rt backend.Device, tr *device.Tracker, h backend.Stream) error {
	op := o.op
	o.op = nil // the caller may hold the future long after; op's captures need not live as long
	return op(rt, tr, h)
}

// StreamOp is an operation of a domain package (graphs, alloc) on a stream, run by Submit:
// EnqueueOn queues its work on the stream whose handle it is given, on the device's actor
// thread. Its parameter types are internal to the module, so code outside it cannot
// implement it.
type StreamOp interface {
	EnqueueOn(rt backend.Device, tr *device.Tracker, h backend.Stream) error
}

// Op is the message part of a StreamOp: embedded beside the operation's arguments, it makes
// the operation one object, its future included (device.Op says why that matters).
type Op struct {
	device.Op
	s    *Stream
	t    tracking
	self StreamOp
}

// Submit sends self, whose embedded Op is o, to run on s: a destroyed stream is refused, and
// the future completes when the GPU has passed self's work. o must be fresh: one submitted
// before is refused with actor.ErrFutureReused, and left as it was.
func Submit(ctx context.Context, s *Stream, o *Op, self StreamOp) *Future {
	if s == nil {
		return actor.Completed(struct{}{}, invalid("operation on a nil stream"))
	}
	if o.s != nil {
		return actor.Completed(struct{}{}, actor.ErrFutureReused)
	}
	o.s, o.self = s, self
	return device.Submit(ctx, s.dev, &o.Op, (*opEnqueuer)(o))
}

// SubmitThen is Submit whose future completes with then's result (EnqueueThen says how).
func SubmitThen(ctx context.Context, s *Stream, o *Op, self StreamOp, then func(error) error) *Future {
	if then == nil {
		return actor.Completed(struct{}{}, invalid("SubmitThen with a nil then"))
	}
	if o.s != nil {
		return actor.Completed(struct{}{}, actor.ErrFutureReused)
	}
	o.t.then = then
	return Submit(ctx, s, o, self)
}

// SubmitQueued is Submit whose future completes once self's work is queued, not when the GPU
// has passed it: for the leading parts of one operation sent as several messages, whose last
// part's future (Submit, SubmitThen) completes after the GPU has passed them all, as stream
// order makes it. Untracked, the leading parts cost the tracker nothing. Tracked, they may
// get a watermark among the runs, queried between the messages: in a C loop of one-node graph
// launches on the actor's thread, that pattern cost 2.3–3.0% where the host set the pace, and
// nothing where the GPU did (graphs' BenchmarkLaunchNGap, cloop-marks, H100).
func SubmitQueued(ctx context.Context, s *Stream, o *Op, self StreamOp) *Future {
	if o.s != nil {
		return actor.Completed(struct{}{}, actor.ErrFutureReused)
	}
	o.t.queued = true
	return Submit(ctx, s, o, self)
}

// opEnqueuer is an Op as device.Submit runs it, without Enqueue in Op's own API.
type opEnqueuer Op

func (o *opEnqueuer) Enqueue(rt backend.Device, tr *device.Tracker, f *Future) error {
	s := o.s
	if err := s.alive(); err != nil {
		return err
	}
	if err := o.self.EnqueueOn(rt, tr, s.h); err != nil {
		return err
	}
	switch {
	case o.t.queued:
		f.Complete(struct{}{}, nil)
	case o.t.then != nil:
		then := o.t.then
		tr.After(s.h, func(err error) { f.Complete(struct{}{}, callThen(then, err)) })
	case o.t.marked:
		tr.AfterMarked(s.h, func(err error) { f.Complete(struct{}{}, err) })
	default:
		tr.AfterFuture(s.h, f)
	}
	return nil
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

// Launch queues kernel k with shape cfg and args (as device.Device.Launch takes them).
func (s *Stream) Launch(ctx context.Context, k *device.Kernel, cfg device.Config, args ...any) *Future {
	spec, err := s.dev.PrepareLaunch(k, cfg, args)
	if err != nil {
		return actor.Completed(struct{}{}, err)
	}
	o := &launchOp{spec: spec}
	return Submit(ctx, s, &o.Op, o)
}

// launchOp is a kernel launch: the hottest operation, one object.
type launchOp struct {
	Op
	spec device.LaunchSpec
}

func (o *launchOp) EnqueueOn(_ backend.Device, _ *device.Tracker, h backend.Stream) error {
	spec := o.spec
	o.spec = device.LaunchSpec{} // the future outlives the launch; its arguments need not
	return o.s.dev.Enqueue(spec, h)
}

// CopyHostToDevice queues a copy of the first Size(dst) bytes of pinned src into dst.
func (s *Stream) CopyHostToDevice(ctx context.Context, dst device.Mem, src *device.HostBuffer) *Future {
	return s.enqueue(ctx, func(rt backend.Device, _ *device.Tracker, _ backend.Stream) error {
		p, n, err := s.dev.Resolve("copy destination", dst)
		if err != nil {
			return err
		}
		host, err := s.dev.ResolveHost("copy source", src, n)
		if err != nil {
			return err
		}
		return rt.CopyHtoD(p, host, n, s.h)
	})
}

// CopyDeviceToHost queues a copy of all of src into the start of pinned dst.
func (s *Stream) CopyDeviceToHost(ctx context.Context, dst *device.HostBuffer, src device.Mem) *Future {
	return s.enqueue(ctx, func(rt backend.Device, _ *device.Tracker, _ backend.Stream) error {
		p, n, err := s.dev.Resolve("copy source", src)
		if err != nil {
			return err
		}
		host, err := s.dev.ResolveHost("copy destination", dst, n)
		if err != nil {
			return err
		}
		return rt.CopyDtoH(host, p, n, s.h)
	})
}

// Copy queues a copy of all of src into the start of dst, both on the stream's device.
func (s *Stream) Copy(ctx context.Context, dst, src device.Mem) *Future {
	return s.enqueue(ctx, func(rt backend.Device, _ *device.Tracker, _ backend.Stream) error {
		dp, dn, err := s.dev.Resolve("copy destination", dst)
		if err != nil {
			return err
		}
		sp, sn, err := s.dev.Resolve("copy source", src)
		if err != nil {
			return err
		}
		if sn > dn {
			return fmt.Errorf("%w: copy of %d bytes into a %d-byte destination", device.ErrOutOfRange, sn, dn)
		}
		return rt.CopyDtoD(dp, sp, sn, s.h)
	})
}

// Memset queues setting every byte of dst to value.
func (s *Stream) Memset(ctx context.Context, dst device.Mem, value byte) *Future {
	return s.enqueue(ctx, func(rt backend.Device, _ *device.Tracker, _ backend.Stream) error {
		p, n, err := s.dev.Resolve("memset destination", dst)
		if err != nil {
			return err
		}
		return rt.Memset(p, value, n, s.h)
	})
}

// Record records e at this point of the stream; the future completes when the GPU reaches it.
// e must belong to the stream's device.
func (s *Stream) Record(ctx context.Context, e *Event) *Future {
	if e == nil {
		return actor.Completed(struct{}{}, invalid("Record of a nil event"))
	}
	if e.dev != s.dev {
		return actor.Completed(struct{}{}, wrongDevice("event", e.dev, s.dev))
	}
	n := e.issued.Add(1)
	f := s.enqueue(ctx, func(rt backend.Device, _ *device.Tracker, _ backend.Stream) error {
		defer e.noteRecorded(n)
		if err := e.alive(); err != nil {
			return err
		}
		return rt.EventRecord(e.h, s.h)
	})
	e.last.Store(f)
	return f
}

// Wait makes the work queued on the stream after it wait until e's most recent record has
// completed on the GPU. e may belong to another device; then Wait first waits, on the calling
// goroutine, until that device has issued the records sent before it (devices' actors run
// independently), so Record on one device then Wait on another, from one goroutine, is ordered
// as written. The future completes when the GPU has passed the wait.
func (s *Stream) Wait(ctx context.Context, e *Event) *Future {
	if e == nil {
		return actor.Completed(struct{}{}, invalid("Wait on a nil event"))
	}
	if e.dev != s.dev {
		if err := e.awaitRecorded(ctx); err != nil {
			return actor.Completed(struct{}{}, err)
		}
	}
	return s.enqueue(ctx, func(rt backend.Device, _ *device.Tracker, _ backend.Stream) error {
		if err := e.alive(); err != nil {
			return err
		}
		return rt.StreamWaitEvent(s.h, e.h)
	})
}
