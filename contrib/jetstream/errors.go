package jetstream

import (
	"errors"
	"fmt"
)

var (
	// ErrNoServer is returned by Connect when no NATS server it was given answers.
	ErrNoServer = errors.New("jetstream: no NATS server reachable")
	// ErrRefused is returned by Connect when a server answered and refused the connection:
	// the credentials (wrong password, unknown nkey or creds), or TLS (a server certificate
	// the TLS config does not trust, no client certificate where the server requires one).
	ErrRefused = errors.New("jetstream: connection refused")
	// ErrPermission is returned by a call that the user's NATS permissions deny (a submit-only
	// user serving jobs, a worker user without the JetStream API subjects it needs): the error
	// names the subject denied. The README lists the permissions a worker and a submitter need.
	ErrPermission = errors.New("jetstream: permission denied")
	// ErrUnknownHandler is returned by Submit for a handler that no live worker registered.
	ErrUnknownHandler = errors.New("jetstream: no worker serves this handler")
	// ErrTooLarge is returned for a job input or result over the payload limit: by Submit
	// before it publishes, and by a worker before the job gets any GPU memory.
	ErrTooLarge = errors.New("jetstream: payload over the limit")
	// ErrBadResult is returned by Future.Wait for a result message that does not decode.
	ErrBadResult = errors.New("jetstream: result does not decode")
	// ErrStreamSettings is returned by Connect when a stream of the name it needs exists with
	// other settings than it would give it.
	ErrStreamSettings = errors.New("jetstream: stream exists with other settings")
	// ErrDeadLetter is returned by Future.Wait for a job that failed on every attempt it was
	// given; the job and every error it met went to the dead-letter subject.
	ErrDeadLetter = errors.New("jetstream: job failed too many times")
	// ErrDeadline is returned by Future.Wait for a job whose deadline passed before a worker
	// started it.
	ErrDeadline = errors.New("jetstream: job deadline passed before it ran")
	// ErrClosed is returned for work submitted to a closed client.
	ErrClosed = errors.New("jetstream: closed")
)

// JobError is how a job that ran and failed reaches its client: the worker and handler it
// failed on and the error's text (errors do not travel as values between processes). It
// matches ErrDeadLetter, ErrTooLarge or ErrDeadline through errors.Is when Kind says so.
type JobError struct {
	Job, Handler, Worker string
	Kind                 string // "handler", "dead-letter", "too-large" or "deadline"
	Msg                  string
}

func (e *JobError) Error() string {
	return fmt.Sprintf("jetstream: job %s (handler %q) failed on worker %s: %s", e.Job, e.Handler, e.Worker, e.Msg)
}

// Is matches the sentinel of the error's kind.
func (e *JobError) Is(target error) bool {
	switch e.Kind {
	case kindDead:
		return target == ErrDeadLetter
	case kindTooLarge:
		return target == ErrTooLarge
	case kindDeadline:
		return target == ErrDeadline
	}
	return false
}

const (
	kindHandler  = "handler"
	kindDead     = "dead-letter"
	kindTooLarge = "too-large"
	kindDeadline = "deadline"
)

// permanent marks a handler error that running the job again cannot mend.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent marks err, returned by a handler, as one that another attempt cannot mend (bad
// input, say): the job fails at once, to its client, with no retry and no dead letter.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err}
}
