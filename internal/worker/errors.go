package worker

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrWorkerDied is matched (errors.Is) by the error of every call that was pending, or
	// made, after the worker process died or was killed; the error is a *DiedError.
	ErrWorkerDied = errors.New("worker died")
	// ErrWorkerHung is matched by the error of a worker killed because it stopped answering
	// heartbeats; that error matches ErrWorkerDied too.
	ErrWorkerHung = errors.New("worker hung")
	// ErrStartFailed is matched by Start's error when the worker could not be started or did
	// not say hello in time.
	ErrStartFailed = errors.New("worker did not start")
	// ErrClosed is returned by calls made after Close, and by those Close found pending.
	ErrClosed = errors.New("worker closed")
	// ErrTooLarge is returned by Call for a request, and to a caller for a response, larger
	// than the transport carries (MaxMessage).
	ErrTooLarge = errors.New("worker message too large")
	// ErrUnsupported is returned by Start where worker processes are not supported.
	ErrUnsupported = errors.New("worker processes are supported on Linux only")
)

// DiedError says how a worker process ended: its exit status or the signal that killed it,
// or that it was killed for not answering heartbeats.
type DiedError struct {
	Pid int
	// Status is the process's end as the os package words it: "exit status 3",
	// "signal: killed".
	Status string
	// Hung is set when the parent killed the worker for missing heartbeats for HungAfter.
	Hung      bool
	HungAfter time.Duration
	// Stderr is the tail of what the worker wrote to its standard error, if any.
	Stderr string
}

// Error names the pid and how the worker ended.
func (e *DiedError) Error() string {
	s := fmt.Sprintf("worker process %d died: %s", e.Pid, e.Status)
	if e.Hung {
		s = fmt.Sprintf("worker process %d hung: no heartbeat answer for %v; killed (%s)", e.Pid, e.HungAfter, e.Status)
	}
	if e.Stderr != "" {
		s += "; stderr: " + e.Stderr
	}
	return s
}

// Is matches ErrWorkerDied always, and ErrWorkerHung when the worker was killed as hung.
func (e *DiedError) Is(target error) bool {
	return target == ErrWorkerDied || (e.Hung && target == ErrWorkerHung)
}

// RemoteError is a handler's error as the default ErrorCodec carries it across: a code and
// the error's text. A handler may return one to choose the code.
type RemoteError struct {
	Code    int64
	Message string
}

// Error is the handler's error text.
func (e *RemoteError) Error() string {
	return fmt.Sprintf("worker: %s (code %d)", e.Message, e.Code)
}

// ErrorCodec carries a handler's error from the worker to the parent: Encode runs in the
// worker, Decode in the parent, so the parent can rebuild typed errors (the CUDA layer maps
// codes to cudaerr values). Both sides must use the same codec.
type ErrorCodec interface {
	// Encode turns a handler's non-nil error into a code and a message.
	Encode(err error) (code int64, msg string)
	// Decode rebuilds the error from them; it must return a non-nil error.
	Decode(code int64, msg string) error
}

// CodeGeneric is the default codec's code for an error that is not a *RemoteError.
const CodeGeneric int64 = 1

// DefaultCodec carries errors as *RemoteError: a *RemoteError in the chain keeps its code,
// any other error gets CodeGeneric.
type DefaultCodec struct{}

// Encode implements ErrorCodec.
func (DefaultCodec) Encode(err error) (int64, string) {
	if re, ok := errors.AsType[*RemoteError](err); ok {
		return re.Code, re.Message
	}
	return CodeGeneric, err.Error()
}

// Decode implements ErrorCodec.
func (DefaultCodec) Decode(code int64, msg string) error {
	return &RemoteError{Code: code, Message: msg}
}
