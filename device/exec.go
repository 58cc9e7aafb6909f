package device

import (
	"context"
	"unsafe"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Exec runs op on the device's actor thread, with the device's runtime and its completion
// Tracker. It is the extension point of gpuactor's domain packages (streams, alloc, graphs),
// which define their own ops; op's parameter types are internal to the module, so code
// outside it cannot call Exec. The device's guard applies: a failed device refuses the op.
func Exec[T any](ctx context.Context, d *Device, op func(rt backend.Device, tr *Tracker) (T, error)) *actor.Future[T] {
	return call(ctx, d, func() (T, error) { return op(d.dev, d.tracker) })
}

// Resolve checks m against the device and returns its address and length: for ops of domain
// packages, on the actor thread (where frees happen too, so the answer is authoritative).
func (d *Device) Resolve(what string, m Mem) (DevicePtr, uint64, error) { return d.span(what, m) }

// ResolveHost checks that pinned buffer h belongs to the device, is live and holds n bytes, and
// returns its address; on the actor thread.
func (d *Device) ResolveHost(what string, h *HostBuffer, n uint64) (unsafe.Pointer, error) {
	if err := d.hostSpan(what, h, n); err != nil {
		return nil, err
	}
	return h.p, nil
}

// PrepareLaunch checks a launch's shape and arguments against k and the device, off the actor
// thread, and returns a LaunchSpec for RunLaunch.
func (d *Device) PrepareLaunch(k *Kernel, cfg Config, args []any) (LaunchSpec, error) {
	packed, mems, err := d.prepareLaunch(k, cfg, args)
	return LaunchSpec{k: k, cfg: cfg, args: packed, mems: mems}, err
}

// LaunchSpec is a checked launch, ready to enqueue on any stream of its device.
type LaunchSpec struct {
	k    *Kernel
	cfg  Config
	args []backend.Arg
	mems []memArg // the memory arguments, resolved on the actor thread
}

// Enqueue launches spec on stream s; on the actor thread. Buffers freed since PrepareLaunch
// (or whose allocation failed) and unloaded modules are refused here.
func (d *Device) Enqueue(spec LaunchSpec, s backend.Stream) error {
	return d.enqueueLaunch(spec.k, spec.cfg, spec.args, spec.mems, s)
}

// ExecTracked is Exec for stream-ordered ops whose result is known only when the GPU reaches
// them. op enqueues its work and hands done to Tracker.After (or calls it itself); the future
// completes with done's error, with op's own error, or with whatever kept op from running
// (a failed or closed device, ctx, a panic).
func ExecTracked(ctx context.Context, d *Device, op func(rt backend.Device, tr *Tracker, done func(error)) error) *actor.Future[struct{}] {
	return ExecFuture(ctx, d, func(rt backend.Device, tr *Tracker, f *actor.Future[struct{}]) error {
		return op(rt, tr, func(err error) { f.Complete(struct{}{}, err) })
	})
}

// ExecFuture is ExecTracked for an op that is handed its own future, to complete with
// Tracker.AfterFuture when the GPU passes its work (or itself). Hot operations use Submit,
// which spares the op's closure.
func ExecFuture(ctx context.Context, d *Device, op func(rt backend.Device, tr *Tracker, f *actor.Future[struct{}]) error) *actor.Future[struct{}] {
	t := &funcOp{op: op}
	return Submit(ctx, d, &t.Op, t)
}

// funcOp is the message of ExecFuture.
type funcOp struct {
	Op
	op func(rt backend.Device, tr *Tracker, f *actor.Future[struct{}]) error
}

func (t *funcOp) Enqueue(rt backend.Device, tr *Tracker, f *actor.Future[struct{}]) error {
	op := t.op
	t.op = nil // the caller may hold the future long after; its captures need not live as long
	return op(rt, tr, f)
}

// Enqueuer is a stream-ordered operation of a domain package, run by Submit: Enqueue queues
// its work on the actor thread and arranges for f, the operation's future, to complete (with
// Tracker.AfterFuture, or itself); an error it returns completes f at once.
type Enqueuer interface {
	Enqueue(rt backend.Device, tr *Tracker, f *actor.Future[struct{}]) error
}

// Op is the message part of an Enqueuer: the operation's future and its mailbox entry. A
// domain type embeds it beside its arguments, so that a stream-ordered operation is one
// object: the actor thread reads only memory the caller wrote once, where a closure per layer
// costs it a cache miss per layer (0.1 µs and more each on the GPU hosts). The future keeps
// the whole object alive while a caller holds it.
type Op struct {
	f    actor.Future[struct{}]
	d    *Device
	self Enqueuer
}

// Submit sends self, whose embedded Op is o, to d's actor and returns the operation's future,
// completed with whatever keeps it from running (ctx, a failed or closed device, a panic) when
// it cannot be queued. o must be fresh: one submitted before is refused with
// actor.ErrFutureReused, and left as it was.
func Submit(ctx context.Context, d *Device, o *Op, self Enqueuer) *actor.Future[struct{}] {
	if o.d != nil {
		return actor.Completed(struct{}{}, actor.ErrFutureReused)
	}
	o.d, o.self = d, self
	return actor.CallTask(ctx, d.act, &o.f, actor.Task[struct{}]((*opTask)(o)))
}

// opTask is an Op as the actor runs it, without Run in Op's own API: only the actor may run it.
type opTask Op

func (o *opTask) Run(f *actor.Future[struct{}]) (struct{}, error) {
	if err := o.self.Enqueue(o.d.dev, o.d.tracker, f); err != nil {
		return struct{}{}, err
	}
	return struct{}{}, actor.ErrPending
}
