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
// every <= 0 turns heartbeats off.
func WithHeartbeat(every, hungAfter time.Duration) Option {
	return func(c *config) { c.pingEvery, c.hungAfter = every, hungAfter }
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
