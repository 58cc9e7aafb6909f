package actor

import (
	"errors"
	"fmt"
	"time"
)

// Defaults. The spin windows are sized against the costs they trade with: a locked thread's
// park and wake costs more than a GPU round trip, so spinning a few tens of microseconds
// catches back-to-back traffic without burning a core when the actor goes quiet
// (docs/design/actor-spin.md).
const (
	DefaultMailbox   = 1024
	DefaultBatch     = 64
	DefaultSpin      = 50 * time.Microsecond
	DefaultAwaitSpin = 100 * time.Microsecond
	DefaultBusySpin  = 20 * time.Millisecond
	DefaultIdlePoll  = 100 * time.Microsecond
)

// ErrBadOption is wrapped by the error New returns for an invalid option value; invalid values
// are rejected rather than silently replaced so a misconfiguration is seen at startup.
var ErrBadOption = errors.New("actor: invalid option")

type config struct {
	mailbox   int
	batch     int
	spin      time.Duration
	busySpin  time.Duration
	awaitSpin time.Duration
	idlePoll  time.Duration
	lock      bool
	name      string
	labels    []string // pprof label pairs (WithLabels)
	closedErr error
	init      func() error
	shutdown  func()
	idle      func(waiting bool, now time.Duration) bool
	onPanic   func(*PanicError)
	guard     func() error
	onErr     func(error) error
	err       error // first invalid option; options cannot return errors themselves
}

func defaultConfig() config {
	return config{
		mailbox:   DefaultMailbox,
		batch:     DefaultBatch,
		spin:      DefaultSpin,
		busySpin:  DefaultBusySpin,
		awaitSpin: DefaultAwaitSpin,
		idlePoll:  DefaultIdlePoll,
		lock:      true,
	}
}

func (c *config) bad(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: "+format, append([]any{ErrBadOption}, args...)...)
	}
}

// Option configures an Actor in New.
type Option func(*config)

// WithMailbox sets the bounded mailbox capacity (default 1024). A full mailbox blocks senders
// until there is room or their context ends; that is the backpressure. n < 1 makes New fail
// with ErrBadOption: an unbuffered mailbox would force a park/wake per message.
func WithMailbox(n int) Option {
	return func(c *config) {
		if n < 1 {
			c.bad("mailbox capacity %d < 1", n)
			return
		}
		c.mailbox = n
	}
}

// WithBatch sets how many mailbox messages the actor drains back to back before it calls the
// idle hook again (default 64). It bounds how long completion polling can be starved by a
// flood of new work. n < 1 makes New fail with ErrBadOption.
func WithBatch(n int) Option {
	return func(c *config) {
		if n < 1 {
			c.bad("batch %d < 1", n)
			return
		}
		c.batch = n
	}
}

// WithSpin sets how long an idle actor polls its mailbox before parking (default 50µs); 0
// parks at once. Spinning trades a little CPU for skipping the locked thread's park/wake, the
// dominant cost of a naive actor. The actor spins only with a token of the process's spin
// budget, which leaves a P to spare (so never while GOMAXPROCS is 1: there the senders could
// not run until it stopped). A negative d makes New fail with ErrBadOption.
func WithSpin(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.bad("spin %v < 0", d)
			return
		}
		c.spin = d
	}
}

// WithBusySpin sets how long the actor keeps polling, without parking, while its idle hook
// reports work in progress (default 20ms, which covers most kernels and copies), before it
// falls back to parking with the idle-poll timer. A device's idle hook polls the GPU: a parked
// actor would notice finished work only when its timer fires, and timers under a millisecond
// oversleep to about one, so futures that complete on GPU progress would wait that long.
// CUDA's own default, when a program has more cores than GPUs, likewise spins while it waits
// for the GPU; and as CUDA yields when it has not, an actor spins only while the process's
// other spinners (actors, waiters, workers) leave a P to spare, and parks otherwise. 0 keeps only the WithSpin
// window; a negative d makes New fail with ErrBadOption.
func WithBusySpin(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.bad("busy spin %v < 0", d)
			return
		}
		c.busySpin = d
	}
}

// WithAwaitSpin sets how long Future.Await spins before parking on a channel (default 100µs),
// for every future made by Call on this actor. Spinning lets a waiter see a fast op's result
// without a goroutine park and wake, which costs tens of microseconds. The default
// covers the runtime calls that take tens of microseconds (cudaMalloc, cudaFree, a launch and
// wait, a copy of a few MB); a waiter yields its P while more waiters spin than there are Ps,
// and past its first few microseconds spins only with a token of the process's spin budget.
// A negative d makes New fail with ErrBadOption.
func WithAwaitSpin(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.bad("await spin %v < 0", d)
			return
		}
		c.awaitSpin = d
	}
}

// WithIdlePoll sets how long the actor parks, at most, while the idle hook reports busy
// (default 100µs), so outstanding work is polled without burning a core. d <= 0 makes New
// fail with ErrBadOption.
func WithIdlePoll(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			c.bad("idle poll %v <= 0", d)
			return
		}
		c.idlePoll = d
	}
}

// WithLockedThread chooses whether the actor goroutine is locked to its OS thread (default
// true). CUDA keeps the current device per OS thread, so a device actor must stay on one. The
// lock is never released: when the goroutine exits locked, Go discards the thread, which is
// what we want for a thread that carried a CUDA context.
func WithLockedThread(lock bool) Option {
	return func(c *config) { c.lock = lock }
}

// WithLabels runs the actor goroutine under the pprof labels of the key/value pairs kv, so
// that a CPU profile (go tool pprof -tagfocus, or the labels view) tells its time from the
// rest of the program's. An odd number of strings makes New fail with ErrBadOption.
func WithLabels(kv ...string) Option {
	return func(c *config) {
		if len(kv)%2 != 0 {
			c.bad("labels %q: not key/value pairs", kv)
			return
		}
		c.labels = append(c.labels, kv...)
	}
}

// WithInit runs fn on the actor's thread before any op, e.g. to bind the device. If it fails
// (or panics) New returns its error and the actor goroutine exits.
func WithInit(fn func() error) Option {
	return func(c *config) { c.init = fn }
}

// WithShutdown runs fn on the actor's thread after the last op, before the goroutine exits,
// so thread-bound resources are released where they were created.
func WithShutdown(fn func()) Option {
	return func(c *config) { c.shutdown = fn }
}

// WithIdle installs a hook the actor calls on its thread after every batch and while spinning.
// Returning true means work is outstanding that only polling can finish (e.g. GPU completion),
// so the actor keeps polling: it spins, then parks for at most the idle-poll interval instead
// of indefinitely. Close also waits until the hook reports false, so tracked work completes
// before shutdown. waiting tells the hook that messages are waiting to run, so it may keep
// itself brief; now is the actor's monotonic clock (time since New), read just before the
// call, so that a hook that paces itself need not read the clock again.
func WithIdle(fn func(waiting bool, now time.Duration) (busy bool)) Option {
	return func(c *config) { c.idle = fn }
}

// WithPanicHandler installs a hook called on the actor's thread with every recovered panic.
// Without it a panic in a fire-and-forget op (Post, PostBatch) is visible only in Stats.
func WithPanicHandler(fn func(*PanicError)) Option {
	return func(c *config) { c.onPanic = fn }
}

// WithGuard makes every Call check guard on the actor thread before running: a non-nil error
// fails the op with that error instead. A device uses it to refuse work once a sticky fault
// has failed it, without wrapping every op in a closure of its own.
func WithGuard(guard func() error) Option { return func(c *config) { c.guard = guard } }

// WithErrorMap passes every error a Call's op returns through mapErr, on the actor thread,
// before the future completes, and completes the future with what mapErr returns. A device
// uses it to notice sticky faults and to report each as the device's one failure.
func WithErrorMap(mapErr func(error) error) Option { return func(c *config) { c.onErr = mapErr } }

// WithName names the actor in its errors, to tell devices apart.
func WithName(name string) Option {
	return func(c *config) { c.name = name }
}

// WithClosedError makes err what sends after Close, and ops that will never run, fail with,
// in place of ErrClosed: a library built on the actor gives its users its own sentinel.
func WithClosedError(err error) Option { return func(c *config) { c.closedErr = err } }
