// Package actor is a generic actor runtime: one goroutine, locked to one OS thread for its
// whole life, runs ops (closures) that callers on any goroutine send it, and hands results back
// through futures. It knows nothing about CUDA; the device layer builds on it because CUDA
// keeps its current device per OS thread.
//
// The cost it is engineered around: waking a parked, thread-locked goroutine costs more than
// the GPU round trip it wraps. So both sides spin before parking (the actor polls its mailbox,
// Future.Await polls the result), the actor drains its mailbox in batches, and an idle hook
// lets the owner poll outstanding work without a message per completion
// (docs/design/actor-spin.md).
package actor

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sync/atomic"
	"time"

	"github.com/gpuactor/gpuactor/internal/spin"
)

// ErrClosed is returned (possibly wrapped with the actor's name) by sends after Close, unless
// WithClosedError gave the actor an error of its own.
var ErrClosed = errors.New("actor: closed")

// ErrNilOp is returned for a nil function passed as an op; rejecting it at the send keeps the
// fault with the caller instead of a panic on the actor thread.
var ErrNilOp = errors.New("actor: nil op")

// PanicError is the error of an op that panicked. The actor recovers and goes on serving, so
// one bad op cannot take a device down.
type PanicError struct {
	Value any    // what was passed to panic
	Stack []byte // the panicking goroutine's stack, captured at recovery
}

// Error includes the panic value; the stack is left to callers that want it.
func (e *PanicError) Error() string { return fmt.Sprintf("actor: op panicked: %v", e.Value) }

// Unwrap exposes a panic value that is itself an error (e.g. a runtime error) to errors.Is/As.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// Stats are cumulative counters, read atomically. Comparing Batches with Ops shows how much
// batching happens; Parks shows how often the actor paid a full park/wake. Ops counts a message
// before it runs, so a caller that has seen an op's result sees it counted; Batches counts a
// drain when it ends.
//
// The actor's time divides into Busy (running messages and the idle hook), Spin (polling an
// empty mailbox, which keeps one CPU busy: see WithSpin) and Park (blocked, costing nothing).
type Stats struct {
	Ops      uint64 // functions run: each Post and Call counts one, a PostBatch counts its length
	Messages uint64 // mailbox messages run, counted as each drain ends
	Batches  uint64 // mailbox drains that ran at least one message
	Parks    uint64 // times the actor blocked instead of spinning
	HandOffs uint64 // times the actor yielded its P to goroutines it had woken
	Panics   uint64 // ops (and hooks) that panicked and were recovered
	Mailbox  int    // messages waiting in the mailbox now

	Busy, Spin, Park time.Duration // the actor's time so far, by what it did
}

// op is one mailbox message. A nil op is a wake-up marker with no work.
type op interface {
	// run executes the message on the actor thread.
	run(a *Actor)
	// fail settles the message when its run panicked or it will never run.
	fail(a *Actor, err error)
	// weight is how many functions the message holds, for Stats.Ops.
	weight() uint64
}

// postOp is a fire-and-forget op; a func is pointer-shaped, so boxing it costs no allocation.
type postOp func()

func (p postOp) run(*Actor)         { p() }
func (p postOp) fail(*Actor, error) {}
func (p postOp) weight() uint64     { return 1 }

// batchOp is the message of PostBatch: its functions run in order, each recovered separately.
type batchOp []func()

func (b batchOp) run(a *Actor) {
	for _, fn := range b {
		a.exec(postOp(fn))
	}
}

func (b batchOp) fail(*Actor, error) {}
func (b batchOp) weight() uint64     { return uint64(len(b)) }

// Actor owns one goroutine locked to one OS thread. All methods are safe for concurrent use.
type Actor struct {
	// Read-only after New.
	epoch     time.Time // the origin of clock
	mb        *mailbox
	done      chan struct{}
	errClosed error
	cfg       config

	// Written by every sender; padded so the actor's counters do not share their cache line.
	_        [64]byte
	closed   atomic.Bool
	inflight atomic.Int64 // senders between their closed check and the end of their send
	_        [64]byte

	// Waiters spinning in Future.Await, against procs (GOMAXPROCS when New ran): see spinFor.
	spinners atomic.Int32
	procs    int32
	_        [64]byte

	// A future of this actor's woke a goroutine parked on it (Complete): see handOff.
	woke atomic.Bool
	_    [64]byte

	// Written by the actor goroutine.
	ops, batches, parks, panics atomic.Uint64
	msgs, handOffs              atomic.Uint64
	spinNs, parkNs              atomic.Int64
	stopped                     atomic.Int64  // clock when the loop ended
	closeErr                    error         // set before done is closed
	midList                     bool          // the idle hook runs between messages of a drained list
	lastIdle                    time.Duration // when the idle hook last ran (clock)
	// wokeWaits: a goroutine the actor woke waits on its P, since wokeAt (clock): handOff.
	wokeWaits bool
	wokeAt    time.Duration
}

// New starts the actor goroutine and returns once the init hook has run on it. An invalid
// option or a failing init returns an error and leaves nothing running.
func New(opts ...Option) (*Actor, error) {
	cfg := defaultConfig()
	spin.Refresh()
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.err != nil {
		return nil, cfg.err
	}
	a := &Actor{
		epoch:     time.Now(),
		mb:        newMailbox(cfg.mailbox),
		done:      make(chan struct{}),
		cfg:       cfg,
		errClosed: ErrClosed,
		procs:     int32(runtime.GOMAXPROCS(0)),
	}
	if cfg.closedErr != nil {
		a.errClosed = cfg.closedErr
	} else if cfg.name != "" {
		a.errClosed = fmt.Errorf("actor %q: %w", cfg.name, ErrClosed)
	}
	started := make(chan error, 1)
	go a.main(started)
	if err := <-started; err != nil {
		<-a.done
		return nil, err
	}
	return a, nil
}

// Name returns the name given with WithName.
func (a *Actor) Name() string { return a.cfg.name }

// Closed reports whether Close has been called: the actor refuses new messages from then on.
func (a *Actor) Closed() bool { return a.closed.Load() }

// Done returns a channel closed when the actor goroutine has exited.
func (a *Actor) Done() <-chan struct{} { return a.done }

// Stats returns the counters so far.
func (a *Actor) Stats() Stats {
	st := Stats{
		Ops:      a.ops.Load(),
		Messages: a.msgs.Load(),
		Batches:  a.batches.Load(),
		Parks:    a.parks.Load(),
		HandOffs: a.handOffs.Load(),
		Panics:   a.panics.Load(),
		Mailbox:  int(max(0, a.mb.count.Load())),
		Spin:     time.Duration(a.spinNs.Load()),
		Park:     time.Duration(a.parkNs.Load()),
	}
	alive := a.clock()
	select {
	case <-a.done:
		alive = time.Duration(a.stopped.Load())
	default:
	}
	st.Busy = max(0, alive-st.Spin-st.Park)
	return st
}

// Post sends fn to run on the actor thread without waiting for it. It blocks only while the
// mailbox is full, until ctx ends. A panic in fn is recovered and counted in Stats.Panics.
func (a *Actor) Post(ctx context.Context, fn func()) error {
	if fn == nil {
		return ErrNilOp
	}
	return a.send(ctx, &node{o: postOp(fn)})
}

// PostBatch sends fns as one mailbox message: they run in order, back to back, each recovered
// separately. One message for many functions is the cheapest way to feed the actor. fns is
// copied, so the caller may reuse the slice at once. A nil element rejects the whole batch.
func (a *Actor) PostBatch(ctx context.Context, fns []func()) error {
	if len(fns) == 0 {
		return nil
	}
	for _, fn := range fns {
		if fn == nil {
			return ErrNilOp
		}
	}
	return a.send(ctx, &node{o: batchOp(append([]func(){}, fns...))})
}

// Call sends fn to run on the actor thread and returns a future of its result. It never
// returns nil: if the op cannot be sent (nil fn, ctx done, actor closed) the future is
// returned already completed with that error. A panic in fn completes it with a *PanicError.
func Call[T any](ctx context.Context, a *Actor, fn func() (T, error)) *Future[T] {
	var zero T
	if fn == nil {
		return Completed(zero, ErrNilOp)
	}
	return CallInto(ctx, a, &Promise[T]{}, fn)
}

// ErrPending, returned by a Call's op, leaves the op's future pending: the op has arranged for
// its promise to be completed later, e.g. when the GPU reaches the work it queued.
var ErrPending = errors.New("actor: completion pending")

// CallInto is Call with a promise the caller made (NewPromise), so that fn can capture it and
// complete it later by returning ErrPending. Whatever keeps fn from running or finishing (ctx,
// Close, the guard, a panic) still completes p, so its future never hangs. p must be fresh:
// sent once.
func CallInto[T any](ctx context.Context, a *Actor, p *Promise[T], fn func() (T, error)) *Future[T] {
	if fn == nil {
		return CallTask(ctx, a, p, nil) // refused as sent, like any op
	}
	return CallTask(ctx, a, p, Task[T](funcTask[T](fn)))
}

// ErrFutureReused is the error of a CallInto or CallTask given a promise that was sent
// before. The promise carries its own mailbox entry, so sending it twice would corrupt the
// mailbox; the second send is refused with a new, completed future and leaves the first
// untouched.
var ErrFutureReused = errors.New("actor: promise already sent")

// CallTask is CallInto with a Task, which is handed p when it runs. p may be a zero Promise,
// e.g. a field of the task itself; it must be fresh: a promise sent before is refused with
// ErrFutureReused. A nil task completes p with ErrNilOp.
func CallTask[T any](ctx context.Context, a *Actor, p *Promise[T], t Task[T]) *Future[T] {
	var zero T
	f := &p.f
	if !f.sent.CompareAndSwap(false, true) {
		return Completed(zero, ErrFutureReused)
	}
	if t == nil {
		f.complete(zero, ErrNilOp)
		return f
	}
	f.task, f.owner = t, a
	f.spin.Store(int64(a.cfg.awaitSpin))
	f.link.o = p
	if err := a.send(ctx, &f.link); err != nil {
		f.task = nil
		f.complete(zero, err)
	}
	return f
}

// send enqueues n, a message not yet queued. The inflight count is how Close knows that no sender is still on its way
// into the mailbox, which lets Close be safe against racing senders without closing the
// channel under them.
func (a *Actor) send(ctx context.Context, n *node) error {
	a.inflight.Add(1)
	defer a.release()
	if a.closed.Load() {
		return a.errClosed
	}
	if ctx != nil {
		// An already-ended context never enqueues, even with room in the mailbox.
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return a.mb.push(ctx, n)
}

// release ends a send. The last sender out after Close wakes the actor, which may be parked
// waiting for exactly that before it can exit.
func (a *Actor) release() {
	if a.inflight.Add(-1) == 0 && a.closed.Load() {
		a.wake()
	}
}

// wake rouses a parked actor so it re-checks whether it may exit.
func (a *Actor) wake() { a.mb.wake() }

// Close stops accepting ops (later sends get ErrClosed), runs every op already accepted,
// including those of senders blocked on a full mailbox at that moment (each of them either
// gets in and runs or gets ErrClosed), waits until the idle hook is not busy, runs the
// shutdown hook, and waits for the goroutine to exit. It is idempotent and safe concurrently
// with sends. It returns a panic of the shutdown hook, if any. Calling it from an op would wait
// for itself forever.
func (a *Actor) Close() error {
	if a.closed.CompareAndSwap(false, true) {
		a.wake()
	}
	<-a.done
	return a.closeErr
}

// main is the actor goroutine.
func (a *Actor) main(started chan<- error) {
	if a.cfg.lock {
		// Never unlocked: a thread that carried a CUDA context must not be reused by Go.
		runtime.LockOSThread()
	}
	if len(a.cfg.labels) > 0 {
		pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels(a.cfg.labels...)))
	}
	normal := false
	defer func() {
		if !normal {
			// An op called runtime.Goexit (e.g. t.FailNow): settle everything still coming
			// so no caller hangs, then let the goroutine finish exiting.
			a.abort()
		}
		close(a.done)
	}()
	if a.cfg.init != nil {
		if err := a.runInit(); err != nil {
			a.closed.Store(true)
			normal = true
			if a.cfg.name != "" {
				err = fmt.Errorf("actor %q: init: %w", a.cfg.name, err)
			}
			started <- err
			return
		}
	}
	started <- nil
	a.loop()
	a.stopped.Store(int64(a.clock()))
	a.runShutdown()
	normal = true
}

func (a *Actor) runInit() (err error) {
	ok := false
	defer func() {
		if !ok {
			if r := recover(); r != nil {
				err = a.panicked(r)
			} else {
				err = errors.New("actor: init called runtime.Goexit")
			}
		}
	}()
	err = a.cfg.init()
	ok = true
	return err
}

func (a *Actor) runShutdown() {
	if a.cfg.shutdown == nil {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			a.closeErr = a.panicked(r)
		}
	}()
	a.cfg.shutdown()
}

// loop runs until Close was called and nothing is left: no message, no sender on its way in,
// and no busy report from the idle hook.
func (a *Actor) loop() {
	var timer *time.Timer
	busy := false
	for {
		if list := a.mb.take(); list != nil {
			a.runList(list)
			// The idle hook runs when the mailbox is empty, and while messages keep coming at
			// least every idleEvery: often enough to notice finished work, rarely enough that a
			// costly hook (a GPU query) is not paid once per message.
			if a.cfg.idle != nil {
				if now := a.clock(); a.mb.empty() || now-a.lastIdle >= idleEvery {
					busy = a.callIdle(now)
				}
			}
			a.handOff(false)
			continue
		}
		if a.finished(busy) {
			return
		}
		if a.spin(&busy) {
			continue
		}
		// Spinning polled the idle hook, so busy may have just turned false: check again, or
		// the park below would wait for a wake that never comes.
		if a.finished(busy) {
			return
		}
		a.parks.Add(1)
		ready := func() bool { return !a.mb.empty() || a.finished(busy) }
		parked := a.clock()
		if busy {
			a.mb.park(ready, a.cfg.idlePoll, &timer)
		} else {
			a.mb.park(ready, 0, &timer)
		}
		now := a.clock()
		a.parkNs.Add(int64(now - parked))
		busy = a.callIdle(now)
	}
}

// handOff lets a goroutine that the actor woke run at once, when the actor has nothing to do.
// A goroutine woken from the actor's thread (Complete closing the channel it parked on) is
// queued to run next on the actor's P, and the actor keeps that P: it spins rather than
// parks. Another P takes the goroutine only once an idle thread has woken, and it then waits
// out the short sleep the runtime takes before stealing a running P's next goroutine, which
// the kernel's timer slack stretches several times over. Yielding hands the P, with the woken
// goroutine, to another thread at once; the actor's thread gets a P back soon after. It costs
// the actor that pause, so it yields at once only with no message waiting, after a parked
// waiter was woken (docs/design/actor-spin.md).
//
// With work waiting (messages in the mailbox, or, inList, the rest of a drained list) the actor
// keeps its P, but not for ever: where every other P is busy, nobody steals the woken
// goroutine, which would wait for the runtime to preempt the actor, 10 ms or more, with every
// goroutine the actor wakes meanwhile queued behind it. So once a woken goroutine may have
// waited handOffAfter, the actor yields all the same.
func (a *Actor) handOff(inList bool) {
	if !a.woke.Load() {
		return
	}
	if inList || !a.mb.empty() {
		now := a.clock()
		if !a.wokeWaits {
			a.wokeWaits, a.wokeAt = true, now
			return
		}
		if now-a.wokeAt < handOffAfter {
			return
		}
	}
	a.woke.Store(false)
	a.wokeWaits = false
	a.handOffs.Add(1)
	runtime.Gosched()
}

// handOffAfter bounds how long a goroutine the actor woke waits on the actor's P while
// messages keep the actor busy. A yield of the locked actor costs it a hand-off of its P and
// back (tens of microseconds at worst), so the bound keeps that a few percent of a saturated
// actor's time.
const handOffAfter = 250 * time.Microsecond

// idleEvery bounds how long a stream of messages can hold off the idle hook.
const idleEvery = 20 * time.Microsecond

// clockEvery is how many messages of a drained list run between two looks at the clock for
// idleEvery: a read of the clock costs as much as the actor's own work for a short message on
// some hosts, and a few messages overshoot idleEvery by little.
const clockEvery = 4

// clock is the time since the actor started: one read of the monotonic clock, where
// time.Now reads the wall clock too.
func (a *Actor) clock() time.Duration { return time.Since(a.epoch) }

// finished reports whether the actor may exit. Every change that can make it true while the
// actor is parked (Close, the last in-flight sender leaving) wakes it; a change of busy happens
// on the actor itself.
func (a *Actor) finished(busy bool) bool {
	return !busy && a.closed.Load() && a.inflight.Load() == 0 && a.mb.empty()
}

// spin polls the mailbox for the spin window so that back-to-back traffic never pays a
// park/wake, and reports whether a message arrived. It does not yield: a yielding locked
// goroutine would have to hand its P to another thread and back, which is the very cost
// being avoided. A poll is one atomic load.
func (a *Actor) spin(busy *bool) bool {
	// A spinning actor holds its P, its goroutine locked and never yielding: it spins only
	// with a token of the process's spin budget, which leaves a P to spare for the goroutines
	// whose messages and completions it waits for (none with one P), and parks otherwise.
	if a.cfg.spin <= 0 && a.cfg.busySpin <= 0 {
		return false
	}
	if !spin.Acquire() {
		return false
	}
	defer spin.Release()
	start := a.clock()
	last := start
	// The idle window counts from the moment the actor has nothing left in flight, not from
	// the start of the spin: an actor that spun through a long piece of work would otherwise
	// park the moment it finished, and the caller's next message, typically sent right after
	// its await returns, would pay the locked thread's wake (tens of microseconds).
	idleFrom := start
	for {
		for range 64 {
			if !a.mb.empty() {
				return true
			}
		}
		now := a.clock() // one read serves the hook, the window and Stats.Spin
		a.spinNs.Add(int64(now - last))
		last = now
		if a.cfg.idle != nil {
			was := *busy
			*busy = a.callIdle(now)
			if was && !*busy {
				idleFrom = now
			}
		}
		a.handOff(false)
		if a.closed.Load() && !*busy {
			return false
		}
		if *busy {
			// The idle hook is polling work in progress.
			if now-start >= max(a.cfg.spin, a.cfg.busySpin) {
				return false
			}
		} else if now-idleFrom >= a.cfg.spin {
			return false
		}
	}
}

// runList runs a drained list of messages in order, letting the idle hook poll between
// every batch of them, and about every idleEvery (the clock is read every clockEvery
// messages), so that a long drain never starves it:
// a list of 64 kernel launches takes hundreds of microseconds, and work tracked by the hook
// (GPU completions) must not wait for the whole list.
func (a *Actor) runList(n *node) {
	a.batches.Add(1)
	i := 1
	for ; n != nil; i++ {
		next := n.next
		n.next = nil
		a.start(n.o)
		n = next
		if n == nil {
			continue
		}
		if i%clockEvery == 0 {
			a.handOff(true) // a long list must not hold a goroutine the actor woke either
		}
		if a.cfg.idle == nil || (i%a.cfg.batch != 0 && i%clockEvery != 0) {
			continue
		}
		if now := a.clock(); i%a.cfg.batch == 0 || now-a.lastIdle >= idleEvery {
			a.midList = true
			a.callIdle(now)
			a.midList = false
		}
	}
	a.msgs.Add(uint64(i - 1))
}

// start counts a message's functions before running them, so a caller that sees an op's
// result also sees it in Stats.
func (a *Actor) start(o op) {
	a.ops.Add(o.weight())
	a.exec(o)
}

// exec runs one message, turning a panic into that message's failure.
func (a *Actor) exec(o op) {
	ok := false
	defer func() {
		if ok {
			return
		}
		if r := recover(); r != nil {
			o.fail(a, a.panicked(r))
			return
		}
		// r == nil with !ok: runtime.Goexit is unwinding the actor goroutine.
		o.fail(a, a.goexitErr())
	}()
	o.run(a)
	ok = true
}

// panicked records a recovered panic and reports it to the panic handler.
func (a *Actor) panicked(r any) *PanicError {
	pe := &PanicError{Value: r, Stack: debug.Stack()}
	a.panics.Add(1)
	if h := a.cfg.onPanic; h != nil {
		func() {
			defer func() { _ = recover() }() // a broken handler must not kill the actor
			h(pe)
		}()
	}
	return pe
}

// callIdle runs the idle hook at clock reading now, which callers have read anyway: a read
// costs 55–60 ns on the GPU hosts, and the hook runs often. A panicking hook counts as a
// panic and as not busy.
func (a *Actor) callIdle(now time.Duration) (busy bool) {
	if a.cfg.idle == nil {
		return false
	}
	defer func() {
		if r := recover(); r != nil {
			a.panicked(r)
			busy = false
		}
	}()
	a.lastIdle = now
	return a.cfg.idle(a.midList || !a.mb.empty(), now)
}

func (a *Actor) goexitErr() error {
	return fmt.Errorf("%w: op called runtime.Goexit on the actor goroutine", a.errClosed)
}

// abort runs while the goroutine unwinds from runtime.Goexit: it refuses new sends, fails
// every queued or incoming message, runs shutdown and records why.
func (a *Actor) abort() {
	a.closed.Store(true)
	err := a.goexitErr()
	var timer *time.Timer
	for {
		for n := a.mb.take(); n != nil; {
			next := n.next
			n.next = nil // a future held by its caller must not keep the messages after it
			n.o.fail(a, err)
			n = next
		}
		if a.inflight.Load() == 0 && a.mb.empty() {
			break
		}
		// The last sender out wakes the actor.
		a.mb.park(func() bool { return !a.mb.empty() || a.inflight.Load() == 0 }, 0, &timer)
	}
	a.runShutdown()
	if a.closeErr == nil {
		a.closeErr = err
	}
}
