package supervise

import (
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
}

// WithRestarts allows at most n restarts in any window (default 3 a minute); one more failure
// and the supervisor gives up. n = 0 never restarts.
func WithRestarts(n int, window time.Duration) Option {
	return func(c *config) { c.maxRestarts, c.window = max(n, 0), window }
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
// counts no answer within timeout as a failure.
func WithHealthCheck(every, timeout time.Duration) Option {
	return func(c *config) { c.healthEvery, c.healthTimeout = every, timeout }
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
