package actor

import (
	"cmp"
	"context"
	"errors"
	"runtime"
	"runtime/trace"
	"sync/atomic"
	"time"

	"github.com/gpuactor/gpuactor/internal/spin"
)

// AwaitRegion is the runtime/trace region a goroutine is in while Await waits for a result
// that is not there yet: for a device's futures, its wait for the actor and the GPU.
const AwaitRegion = "gpuactor.await"

// ErrNotReady is returned by Future.Value before the future completes.
var ErrNotReady = errors.New("actor: future not completed")

const (
	statePending    uint32 = iota
	stateCompleting        // a completer won the race and is writing the result
	stateDone              // result published; readers may look at val/err
)

// tightSpins is how many times Await polls the state before it starts yielding: about one to
// a few microseconds of polling, the usual wait for a GPU launch to be queued.
const tightSpins = 4096

// waiter wraps the done channel so it can live behind an atomic pointer: the channel is made
// only when someone parks or asks for Done, which keeps the fast path at one allocation.
type waiter struct{ c chan struct{} }

// closedWaiter marks a completed future: once installed, nobody can add a channel that would
// never be closed.
var closedWaiter = func() *waiter {
	w := &waiter{c: make(chan struct{})}
	close(w.c)
	return w
}()

// Future is the read side of an eventual result: any number of goroutines may wait on it, and
// none of them can complete it. The write side is its Promise, which stays with whoever
// produces the result (the actor, for a Call).
type Future[T any] struct {
	state atomic.Uint32
	spin  atomic.Int64 // await-spin window in ns; atomic so SetAwaitSpin cannot race Await
	ch    atomic.Pointer[waiter]
	val   T
	err   error
	task  Task[T]     // the op of a Call; cleared when it starts (a closure's captures can go then)
	owner *Actor      // the actor of a Call, whose spinning waiters are counted; nil otherwise
	link  node        // the future's mailbox entry: a Call sends the future itself, allocating nothing
	sent  atomic.Bool // the future was handed to CallTask: its entry must never be queued twice
	// probed: done is also the future's Prober (OnCompleteProbed), read by spinning waiters,
	// so complete leaves it in place. A bool in the padding after sent: no bigger future.
	probed bool
	done   Completer[T] // OnComplete's
}

// Promise is the write side of a Future: whoever holds it completes the future, once. Keep it
// to the code that produces the result and hand out only Future. The zero value is a pending
// promise whose future parks at once in Await; NewPromise's spins first.
type Promise[T any] struct {
	f Future[T]
}

// NewPromise returns a pending promise for a result produced later, e.g. by an idle hook that
// sees the GPU reach an event. Its future's Await spins for DefaultAwaitSpin before parking.
func NewPromise[T any]() *Promise[T] {
	p := &Promise[T]{}
	p.f.spin.Store(int64(DefaultAwaitSpin))
	return p
}

// Future is the promise's read side.
func (p *Promise[T]) Future() *Future[T] { return &p.f }

// Complete sets the result. Only the first call has an effect; it reports whether this call
// was it, so racing completers (a timeout and the real result, say) can tell who won. Safe
// from any goroutine. Completing a Call's future that a goroutine is parked on asks the actor
// to let that goroutine run at once (Actor.handOff).
func (p *Promise[T]) Complete(v T, err error) bool { return p.f.complete(v, err) }

// Completer is told of a future's result as it completes (Promise.OnComplete).
type Completer[T any] interface {
	Completed(v T, err error)
}

// CompleteFunc is a function as a Completer.
type CompleteFunc[T any] func(v T, err error)

// Completed calls f.
func (f CompleteFunc[T]) Completed(v T, err error) { f(v, err) }

// OnComplete makes c run once the future completes, whoever completes it (the producer, or
// the actor refusing or dropping the op), on the completing goroutine and before any waiter
// wakes: for giving back what the producer held until then, or counting it. c must be brief
// and must not wait or panic. Set it before the future can complete (before the promise is
// sent); a second call replaces the first. A Completer that is a pointer costs no allocation.
func (p *Promise[T]) OnComplete(c Completer[T]) { p.f.done, p.f.probed = c, false }

// Task is the op of CallTask: Run executes on the actor thread and returns the result of p's
// future, or ErrPending to complete p later. A domain type that holds its promise and its op's
// arguments in one struct is one allocation per op, where a closure and a future are two.
type Task[T any] interface {
	Run(p *Promise[T]) (T, error)
}

// Refuser is implemented by a Task that must know when it will never run — the actor's guard
// refused it, or the actor stopped before its turn — to give back what its sender set aside
// for it. Refused runs before the task's future completes with err.
type Refuser interface {
	Refused(err error)
}

func refused(task any, err error) {
	if r, ok := task.(Refuser); ok {
		r.Refused(err)
	}
}

// funcTask is the Task of Call and CallInto; a func is pointer-shaped, so boxing it costs no
// allocation.
type funcTask[T any] func() (T, error)

func (fn funcTask[T]) Run(*Promise[T]) (T, error) { return fn() }

// Completed returns a future that is already done with v and err, so APIs can always hand back
// a future, even when they fail before reaching the actor.
func Completed[T any](v T, err error) *Future[T] {
	f := &Future[T]{val: v, err: err}
	f.state.Store(stateDone)
	f.ch.Store(closedWaiter)
	return f
}

// SetAwaitSpin changes how long Await spins before parking; 0 parks at once. Meant to be set
// before waiting, but safe at any time.
func (f *Future[T]) SetAwaitSpin(d time.Duration) {
	if d < 0 {
		d = 0
	}
	f.spin.Store(int64(d))
}

// AwaitSpin reports how long Await spins before parking.
func (f *Future[T]) AwaitSpin() time.Duration { return time.Duration(f.spin.Load()) }

// complete is Promise.Complete.
func (f *Future[T]) complete(v T, err error) bool {
	if !f.state.CompareAndSwap(statePending, stateCompleting) {
		return false
	}
	f.val, f.err = v, err
	if c := f.done; c != nil {
		if !f.probed { // a probed future's waiters may still read it
			f.done = nil
		}
		c.Completed(v, err)
	}
	f.state.Store(stateDone) // publishes val/err to anyone who loads stateDone
	if w := f.ch.Swap(closedWaiter); w != nil && w != closedWaiter {
		close(w.c)
		if a := f.owner; a != nil {
			a.woke.Store(true) // see Actor.handOff
		}
	}
	return true
}

// Wait waits for the future like Await and returns only its error: the form for futures whose
// value says nothing (a stream operation's, say).
func (f *Future[T]) Wait(ctx context.Context) error {
	_, err := f.Await(ctx)
	return err
}

// Ready reports whether the future has completed.
func (f *Future[T]) Ready() bool { return f.state.Load() == stateDone }

// Err returns the op's error once done; nil before completion or on success.
func (f *Future[T]) Err() error {
	if f.state.Load() != stateDone {
		return nil
	}
	return f.err
}

// Value returns the result without blocking: the value and error if done, else the zero value
// and ErrNotReady.
func (f *Future[T]) Value() (T, error) {
	if f.state.Load() != stateDone {
		var zero T
		return zero, ErrNotReady
	}
	return f.val, f.err
}

// Done returns a channel closed on completion, for select with other events.
func (f *Future[T]) Done() <-chan struct{} { return f.waitCh() }

// waitCh returns the channel Complete will close. Whoever installs a channel before Complete's
// Swap has it closed by that Swap; after the Swap everyone gets the pre-closed channel, so no
// channel is ever left open on a completed future.
func (f *Future[T]) waitCh() chan struct{} {
	if w := f.ch.Load(); w != nil {
		return w.c
	}
	w := &waiter{c: make(chan struct{})}
	if f.ch.CompareAndSwap(nil, w) {
		return w.c
	}
	return f.ch.Load().c
}

// Await returns the result, waiting for it if needed. It first spins briefly (yielding the P
// with runtime.Gosched each round) because the result of a short op usually arrives within
// microseconds and a park/wake would cost more than the op; then it parks. If ctx ends first
// it returns ctx.Err() at once; the op is unaffected and still completes the future, and no
// goroutine is left behind.
func (f *Future[T]) Await(ctx context.Context) (T, error) {
	if f.state.Load() == stateDone {
		return f.val, f.err
	}
	var cancel <-chan struct{}
	if ctx != nil {
		cancel = ctx.Done()
	}
	if cancel != nil {
		select {
		case <-cancel:
			return f.cancelled(ctx)
		default:
		}
	}
	if trace.IsEnabled() { // an execution trace shows the wait as a region of the waiter's
		defer trace.StartRegion(cmp.Or(ctx, context.Background()), AwaitRegion).End()
	}
	if window := time.Duration(f.spin.Load()); window > 0 {
		switch f.spinFor(window, cancel) {
		case spinDone:
			return f.val, f.err
		case spinCancelled:
			return f.cancelled(ctx)
		}
	}
	select {
	case <-f.waitCh():
		return f.val, f.err
	case <-cancel:
		return f.cancelled(ctx)
	}
}

type spinResult uint8

const (
	spinTimedOut spinResult = iota
	spinDone
	spinCancelled
)

// spinFor polls for completion for up to d before Await parks.
//
// First a tight spin: a short op's result lands within a few microseconds, and both Gosched
// and reading the clock cost hundreds of nanoseconds on some hosts (VMs). Those polls are
// bounded, shorter than a park and wake, and draw on no budget. Then, with a token of the
// process's spin budget (internal/spin), it keeps polling; whether it yields between polls
// depends on how many waiters spin on the same actor: while they and the actor fit in GOMAXPROCS nobody needs the P back, and yielding
// would only hammer the scheduler's global run-queue lock, which the actor's thread takes too.
//
// A future with a Prober (OnCompleteProbed) is probed between those polls: the waiter, holding a
// token and so a core to spare, asks the result's source itself. Not during the tight polls,
// which draw on no budget and are meant to last a few microseconds, where a probe may cost one.
func (f *Future[T]) spinFor(d time.Duration, cancel <-chan struct{}) spinResult {
	for range tightSpins {
		if f.state.Load() == stateDone {
			return spinDone
		}
	}
	// Past the tight polls the wait is a spin window, which takes a token of the process's
	// spin budget; without one Await parks at once, as it would at the window's end.
	if !spin.Acquire() {
		return spinTimedOut
	}
	defer spin.Release()
	yield, every := true, 7
	if a := f.owner; a != nil {
		n := a.spinners.Add(1)
		defer a.spinners.Add(-1)
		if n+1 < a.procs {
			yield, every = false, 255
		}
	}
	var probe Prober
	if f.probed {
		probe, _ = f.done.(Prober)
	}
	start := time.Now()
	for i := 1; ; i++ {
		if yield || i&4095 == 0 {
			runtime.Gosched()
		}
		if f.state.Load() == stateDone {
			return spinDone
		}
		check := i&every == 0
		if probe != nil {
			// A probe that asked cost a driver call: read the clock and the context after
			// each, so that the window and a cancellation are kept to within one call.
			switch probe.Probe() {
			case ProbeAsked:
				if f.state.Load() == stateDone {
					return spinDone
				}
				check = true
			case ProbeStop:
				probe = nil
			}
		}
		if check {
			if time.Since(start) >= d {
				return spinTimedOut
			}
			if cancel != nil {
				select {
				case <-cancel:
					return spinCancelled
				default:
				}
			}
		}
	}
}

// cancelled prefers a result that raced in with the cancellation: the work is done, so
// reporting it is more useful than the context error.
func (f *Future[T]) cancelled(ctx context.Context) (T, error) {
	if f.state.Load() == stateDone {
		return f.val, f.err
	}
	var zero T
	return zero, ctx.Err()
}

// run executes the Call's op on the actor thread: a Call's message is its promise.
func (p *Promise[T]) run(a *Actor) {
	f := &p.f
	task := f.task
	f.task = nil
	if a.cfg.guard != nil {
		if err := a.cfg.guard(); err != nil {
			refused(task, err)
			var zero T
			f.complete(zero, err)
			return
		}
	}
	v, err := task.Run(p)
	if err == ErrPending {
		return // the op completes p later
	}
	if err != nil && a.cfg.onErr != nil {
		err = a.cfg.onErr(err)
	}
	f.complete(v, err)
}

func (p *Promise[T]) weight() uint64 { return 1 }

// fail completes a Call whose op panicked, or was dropped because the actor died.
func (p *Promise[T]) fail(_ *Actor, err error) {
	refused(p.f.task, err) // nil once it ran
	p.f.task = nil
	var zero T
	p.f.complete(zero, err)
}
