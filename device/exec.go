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
// Tracker.AfterFuture when the GPU passes its work (or itself): the common case, without the
// callback closure of ExecTracked.
func ExecFuture(ctx context.Context, d *Device, op func(rt backend.Device, tr *Tracker, f *actor.Future[struct{}]) error) *actor.Future[struct{}] {
	t := &futureOp{d: d, op: op}
	return actor.CallTask(ctx, d.act, &t.f, actor.Task[struct{}](t))
}

// futureOp is the message of ExecFuture: the future (with its mailbox entry) and the op in
// one allocation.
type futureOp struct {
	f  actor.Future[struct{}]
	d  *Device
	op func(rt backend.Device, tr *Tracker, f *actor.Future[struct{}]) error
}

func (t *futureOp) Run(f *actor.Future[struct{}]) (struct{}, error) {
	op := t.op
	t.op = nil // the caller may hold the future long after; its captures need not live as long
	if err := op(t.d.dev, t.d.tracker, f); err != nil {
		return struct{}{}, err
	}
	return struct{}{}, actor.ErrPending
}
