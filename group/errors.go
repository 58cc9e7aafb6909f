package group

import "errors"

var (
	// ErrNoDevice: the group has no device able to take work (none given, or all failed).
	ErrNoDevice = errors.New("group: no healthy device")
	// ErrQueueFull: Submit with WithFailFast found the queue full.
	ErrQueueFull = errors.New("group: queue full")
	// ErrTooBig: a job declared more memory (Bytes) than any device of the group has.
	ErrTooBig = errors.New("group: job needs more memory than any device has")
)
