package supervise

import (
	"fmt"
	"log/slog"
	"time"
)

// Option configures New.
type Option func(*config)

type config struct {
	maxRestarts   int
	window        time.Duration
	backoff       time.Duration
	every         time.Duration
	healthEvery   time.Duration
	healthTimeout time.Duration
	log           *slog.Logger
	onFailure     func(generation int, err error)
	onRestart     func(generation int)
	onGiveUp      func(err error)
	errs          []error // what the options refused: New returns them
}

// refuse records an option whose values cannot work, for New to return.
func (c *config) refuse(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("%w: "+format, append([]any{ErrBadOption}, args...)...))
}

// WithRestarts allows at most n restarts in any window (default 3 a minute); one more failure
// and the supervisor gives up. n = 0 never restarts. With n > 0 the window must be positive
// (New fails with ErrBadOption otherwise): a zero window would never count a restart, and
// restart a child that fails at once forever.
func WithRestarts(n int, window time.Duration) Option {
	return func(c *config) {
		if n > 0 && window <= 0 {
			c.refuse("WithRestarts(%d, %v): the window must be positive", n, window)
			return
		}
		c.maxRestarts, c.window = max(n, 0), window
	}
}

// WithBackoff sets the pause before each restart (default 100 ms).
func WithBackoff(d time.Duration) Option { return func(c *config) { c.backoff = max(d, 0) } }

// WithCheckEvery sets how often the child's Err is looked at (default 50 ms).
func WithCheckEvery(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.every = d
		}
	}
}

// WithHealthCheck also calls the child's Health(ctx), when it has one, every so often, and
// counts no answer within timeout as a failure. Both must be positive (New fails with
// ErrBadOption otherwise): a zero timeout would fail every check of a healthy child, and
// restart it until the supervisor gave up.
func WithHealthCheck(every, timeout time.Duration) Option {
	return func(c *config) {
		if every <= 0 || timeout <= 0 {
			c.refuse("WithHealthCheck(%v, %v): the period and the timeout must both be positive", every, timeout)
			return
		}
		c.healthEvery, c.healthTimeout = every, timeout
	}
}

// WithLogger logs failures (error), restarts (info) and giving up (error) to l; the default,
// and a nil l, log nowhere.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// OnFailure calls fn with the generation of the child that failed and why, on the
// supervisor's goroutine, before the restart.
func OnFailure(fn func(generation int, err error)) Option {
	return func(c *config) { c.onFailure = fn }
}

// OnRestart calls fn with the new child's generation once it started.
func OnRestart(fn func(generation int)) Option { return func(c *config) { c.onRestart = fn } }

// OnGiveUp calls fn with the last failure when the supervisor gives up.
func OnGiveUp(fn func(err error)) Option { return func(c *config) { c.onGiveUp = fn } }
