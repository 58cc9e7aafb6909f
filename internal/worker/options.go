package worker

import (
	"io"
	"os"
	"time"
)

// Option configures Start.
type Option func(*config)

type config struct {
	binary       string
	args         []string
	env          []string
	stderr       io.Writer
	startTimeout time.Duration
	closeTimeout time.Duration
	pingEvery    time.Duration
	hungAfter    time.Duration
	callTimeout  time.Duration
	codec        ErrorCodec
	ringSize     int
	ringSpin     time.Duration
}

func defaultConfig() config {
	return config{
		stderr:       os.Stderr,
		startTimeout: 10 * time.Second,
		closeTimeout: 5 * time.Second,
		pingEvery:    500 * time.Millisecond,
		hungAfter:    5 * time.Second,
		callTimeout:  5 * time.Second,
		codec:        DefaultCodec{},
		ringSize:     DefaultRingSize,
		ringSpin:     DefaultRingSpin,
	}
}

// WithBinary starts path (with args) instead of this program's own binary: a separate worker
// binary, which must call Main first thing as this program does.
func WithBinary(path string, args ...string) Option {
	return func(c *config) { c.binary, c.args = path, args }
}

// WithEnv adds "KEY=value" entries to the worker's environment, which is otherwise the
// parent's.
func WithEnv(kv ...string) Option { return func(c *config) { c.env = append(c.env, kv...) } }

// WithStderr sends the worker's standard error to w (default: the parent's standard error).
// Its last lines are also kept for the errors that say a worker died or did not start.
func WithStderr(w io.Writer) Option { return func(c *config) { c.stderr = w } }

// WithStartTimeout bounds the wait for the worker's hello (default 10 s); a worker that says
// nothing by then is killed and Start fails.
func WithStartTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.startTimeout = d
		}
	}
}

// WithCloseTimeout bounds how long Close waits for the worker to exit before killing it
// (default 5 s).
func WithCloseTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.closeTimeout = d
		}
	}
}

// WithHeartbeat pings the worker every `every` and kills it as hung, failing its calls with
// ErrWorkerHung, once no answer came for hungAfter (defaults 500 ms and 5 s). The worker
// answers from its reading goroutine, not from the handler, so a long call is not a hang;
// every <= 0 turns heartbeats off. It sets the call check's timeout (WithCallTimeout) to
// hungAfter too, so that with heartbeats off a frozen worker is still found while a call
// waits for it.
func WithHeartbeat(every, hungAfter time.Duration) Option {
	return func(c *config) { c.pingEvery, c.hungAfter, c.callTimeout = every, hungAfter, max(hungAfter, 0) }
}

// WithCallTimeout checks, once a call has waited d with nothing at all heard from the worker,
// that the worker is alive: it is pinged, and killed as hung (its calls failing with
// ErrWorkerHung) unless it answers within d more. The worker answers pings while a long call
// runs, so only a frozen process is killed, heartbeat or none (default 5 s; d <= 0: never
// checked, so that with heartbeats off a frozen worker holds its calls, and Close's wait for
// them, for good).
func WithCallTimeout(d time.Duration) Option {
	return func(c *config) { c.callTimeout = max(d, 0) }
}

// WithErrorCodec sets how handlers' errors are rebuilt in the parent (default DefaultCodec);
// the worker must serve with the same codec (ServeCodec).
func WithErrorCodec(codec ErrorCodec) Option {
	return func(c *config) {
		if codec != nil {
			c.codec = codec
		}
	}
}

// WithRingSize sets the size of the two shared-memory rings that carry calls and responses
// (default DefaultRingSize; rounded up to a power of two), which bounds MaxMessage. n <= 0
// carries them over the control socket instead: slower, and at most 64 KiB a message. Where
// shared-memory rings are not supported the socket is used anyway.
func WithRingSize(n int) Option { return func(c *config) { c.ringSize = n } }

// DefaultRingSpin is how long either side polls a ring before it sleeps, unless WithRingSpin
// says otherwise: as long as the in-process actor's mailbox spins.
const DefaultRingSpin = 50 * time.Microsecond

// WithRingSpin sets how long the parent and the worker poll a ring, waiting for a message or
// for room, before sleeping on a futex (default DefaultRingSpin); 0 never spins. Spinning
// wins round trips where cores are spare and loses where they are not.
func WithRingSpin(d time.Duration) Option { return func(c *config) { c.ringSpin = max(d, 0) } }
