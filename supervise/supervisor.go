package supervise

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gpuactor/gpuactor/internal/logging"
)

// Child is what a Supervisor watches: Err is non-nil once it has failed for good.
type Child interface {
	Err() error
	Close() error
}

// healthChecker is a Child that can also be asked whether it still answers (device.Device's
// Health).
type healthChecker interface {
	Health(ctx context.Context) error
}

// Start makes a child: the first one, and each restart. ctx is the supervisor's.
type Start[C Child] func(ctx context.Context) (C, error)

// ErrGaveUp is wrapped, with the last failure, by Current's error once the supervisor spent
// its restarts; ErrClosed once it was closed, or its context ended. ErrBadOption is wrapped by
// New's error for an option whose values cannot work.
var (
	ErrGaveUp    = errors.New("supervise: gave up after too many restarts")
	ErrClosed    = errors.New("supervise: closed")
	ErrBadOption = errors.New("supervise: invalid option")
)

// State is where a supervisor is.
type State int

const (
	Running    State = iota // a child runs
	Restarting              // the child failed; a new one is being started
	GaveUp                  // restarts spent: no child
	Closed                  // Close was called, or the context given to New ended
)

// String names the state.
func (s State) String() string {
	switch s {
	case Running:
		return "running"
	case Restarting:
		return "restarting"
	case GaveUp:
		return "gave up"
	case Closed:
		return "closed"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Stats is a snapshot of a supervisor.
type Stats struct {
	State State
	// Generation numbers the children: 1 for the first, one more for each started since.
	Generation int
	// Restarts counts the children started after the first; Failures the failures seen,
	// of children and of starts.
	Restarts, Failures int
	// LastFailure is the last failure's text ("" before any).
	LastFailure string
}

// Supervisor holds one child at a time and restarts it when it fails. Safe for concurrent use.
type Supervisor[C Child] struct {
	start Start[C]
	cfg   config

	mu      sync.Mutex
	child   C
	state   State
	gen     int
	stats   Stats
	lastErr error
	recent  []time.Time // when the restarts within the window happened

	childClosed bool  // child was closed: it failed, or the supervisor stopped
	closeCalled bool  // Close, not the context, stopped the supervisor
	closeErr    error // the child's Close error when the supervisor stopped
	stopErr     error // Current's error once closed: ErrClosed, with the context's cause

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the watcher stops (gave up, or closed)
}

// New starts the first child and watches it; it fails with the start's error when that fails,
// and with an error wrapping ErrBadOption, before starting anything, when an option's values
// cannot work. When ctx ends the supervisor stops as Close stops it: it closes the child, and
// Current returns an error wrapping ErrClosed and the context's cause.
func New[C Child](ctx context.Context, start Start[C], opts ...Option) (*Supervisor[C], error) {
	if start == nil {
		return nil, errors.New("supervise: a nil Start")
	}
	cfg := config{maxRestarts: 3, window: time.Minute, backoff: 100 * time.Millisecond, every: 50 * time.Millisecond}
	for _, o := range opts {
		o(&cfg)
	}
	if err := errors.Join(cfg.errs...); err != nil {
		return nil, err
	}
	cfg.log = logging.OrDiscard(cfg.log)
	child, err := start(ctx)
	if err != nil {
		return nil, fmt.Errorf("supervise: starting the first child: %w", err)
	}
	s := &Supervisor[C]{start: start, cfg: cfg, child: child, gen: 1, done: make(chan struct{})}
	s.stats.Generation = 1
	s.ctx, s.cancel = context.WithCancel(ctx)
	go s.watch()
	return s, nil
}

// Current is the running child, or an error: wrapping ErrGaveUp and the last failure once the
// restarts are spent; ErrClosed once closed, with the context's cause when it was the context
// given to New that ended. While a restart is under way it is the failed child, whose own
// errors say it failed.
func (s *Supervisor[C]) Current() (C, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var zero C
	switch s.state {
	case GaveUp:
		return zero, fmt.Errorf("%w: %w", ErrGaveUp, s.lastErr)
	case Closed:
		return zero, s.stopErr
	}
	return s.child, nil
}

// Stats takes a snapshot.
func (s *Supervisor[C]) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.State = s.state
	return st
}

// Done is closed once the supervisor stopped: it gave up, or was closed.
func (s *Supervisor[C]) Done() <-chan struct{} { return s.done }

// Close stops watching, cancelling a restart under way, and closes the child; it returns the
// child's Close error, also when the context given to New ended first and closed it. It
// returns once the child is closed. Idempotent.
func (s *Supervisor[C]) Close() error {
	s.mu.Lock()
	s.closeCalled = true
	s.mu.Unlock()
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == GaveUp {
		s.state, s.stopErr = Closed, ErrClosed
	}
	return s.closeErr
}

// stop closes the child, unless a failure closed it already, once the watcher ends for any
// reason but giving up.
func (s *Supervisor[C]) stop() {
	s.mu.Lock()
	if s.state == GaveUp {
		s.mu.Unlock()
		return
	}
	s.state, s.stopErr = Closed, ErrClosed
	if !s.closeCalled {
		s.stopErr = fmt.Errorf("%w: its context ended: %w", ErrClosed, context.Cause(s.ctx))
	}
	child, open := s.child, !s.childClosed
	s.childClosed = true
	s.mu.Unlock()
	if open {
		err := child.Close()
		s.mu.Lock()
		s.closeErr = err
		s.mu.Unlock()
	}
}

// watch polls the child for failure, and health-checks it when asked to, until the
// supervisor stops; it restarts the child when it fails. It closes the child when it stops,
// but for giving up, where the failure closed it.
func (s *Supervisor[C]) watch() {
	defer close(s.done)
	defer s.stop()
	tick := time.NewTicker(s.cfg.every)
	defer tick.Stop()
	lastHealth := time.Now()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-tick.C:
		}
		s.mu.Lock()
		child := s.child
		s.mu.Unlock()
		err := child.Err()
		if err == nil && s.cfg.healthEvery > 0 && time.Since(lastHealth) >= s.cfg.healthEvery {
			lastHealth = time.Now()
			if h, ok := any(child).(healthChecker); ok {
				hctx, cancel := context.WithTimeout(s.ctx, s.cfg.healthTimeout)
				if herr := h.Health(hctx); herr != nil && s.ctx.Err() == nil {
					err = fmt.Errorf("supervise: health check: %w", herr)
				}
				cancel()
			}
		}
		if err == nil {
			continue
		}
		if !s.restart(err) {
			return
		}
	}
}

// restart replaces the failed child, within the restart policy; false once it gave up or the
// supervisor stopped.
func (s *Supervisor[C]) restart(failure error) bool {
	for {
		s.mu.Lock()
		s.stats.Failures++
		s.stats.LastFailure = failure.Error()
		s.lastErr = failure
		s.state = Restarting
		gen, old := s.gen, s.child
		s.mu.Unlock()
		s.cfg.log.Error("supervise: child failed", slog.Int("generation", gen), slog.Any("error", failure))
		if s.cfg.onFailure != nil {
			s.cfg.onFailure(gen, failure)
		}
		_ = old.Close() // a failed child closes without waiting for what failed
		s.mu.Lock()
		s.childClosed = true
		s.mu.Unlock()
		if !s.allowed(time.Now()) {
			s.mu.Lock()
			s.state = GaveUp
			s.mu.Unlock()
			s.cfg.log.Error("supervise: giving up", slog.Int("restarts", s.cfg.maxRestarts), slog.Duration("window", s.cfg.window),
				slog.Any("error", failure))
			if s.cfg.onGiveUp != nil {
				s.cfg.onGiveUp(failure)
			}
			return false
		}
		select {
		case <-s.ctx.Done():
			return false
		case <-time.After(s.cfg.backoff):
		}
		child, err := s.start(s.ctx)
		if err != nil {
			if s.ctx.Err() != nil {
				return false
			}
			failure = fmt.Errorf("supervise: restarting: %w", err)
			continue
		}
		s.mu.Lock()
		s.gen++
		s.child, s.state, s.childClosed = child, Running, false
		s.stats.Generation, s.stats.Restarts = s.gen, s.stats.Restarts+1
		gen = s.gen
		s.mu.Unlock()
		s.cfg.log.Info("supervise: restarted", slog.Int("generation", gen))
		if s.cfg.onRestart != nil {
			s.cfg.onRestart(gen)
		}
		return true
	}
}

// allowed counts a restart at now and reports whether it stays within the policy: at most
// maxRestarts in any window.
func (s *Supervisor[C]) allowed(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.recent[:0]
	for _, t := range s.recent {
		if now.Sub(t) < s.cfg.window {
			kept = append(kept, t)
		}
	}
	s.recent = kept
	if len(s.recent) >= s.cfg.maxRestarts {
		return false
	}
	s.recent = append(s.recent, now)
	return true
}
