package core

import (
	"errors"
	"fmt"
)

// The sentinels every public package's errors wrap; the faces re-export them.
var (
	ErrInvalidArgument = errors.New("gpuactor: invalid argument")
	ErrOutOfRange      = errors.New("gpuactor: out of range")
	// ErrClosed is the root of every "used after release" error: a closed device, and a
	// buffer, stream, event, module, graph or pool used after its Close.
	ErrClosed       = errors.New("gpuactor: closed")
	ErrAllocFailed  = errors.New("gpuactor: the buffer's allocation failed")
	ErrWrongDevice  = errors.New("gpuactor: belongs to another device")
	ErrLaunchConfig = errors.New("gpuactor: launch configuration outside device limits")
	ErrKernelArgs   = errors.New("gpuactor: kernel arguments do not match parameters")
	ErrNoKernel     = errors.New("gpuactor: no such kernel")
	ErrNoGlobal     = errors.New("gpuactor: no such module variable")
	ErrDeviceFailed = errors.New("gpuactor: device failed")
	ErrMemoryLimit  = errors.New("gpuactor: device memory limit reached")
	ErrInHostFunc   = errors.New("gpuactor: not allowed in a host function")
)

// Invalid is an ErrInvalidArgument error saying what was wrong.
func Invalid(format string, args ...any) error { return wrap(ErrInvalidArgument, format, args) }

// OutOfRange is an ErrOutOfRange error saying what ran past what.
func OutOfRange(format string, args ...any) error { return wrap(ErrOutOfRange, format, args) }

// Closed is an ErrClosed error saying what was used after its release.
func Closed(format string, args ...any) error { return wrap(ErrClosed, format, args) }

// WrongDevice is an ErrWrongDevice error: what, of device owner, was used on device used.
func WrongDevice(what string, owner, used *Device) error {
	return fmt.Errorf("%w: %s belongs to device %d, used on device %d", ErrWrongDevice, what, owner.ordinal, used.ordinal)
}

func wrap(sentinel error, format string, args []any) error {
	return fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)
}

// closedError is what a closed device refuses work with: ErrClosed, and, once the device has
// failed, its failure too, so that a caller still using a device closed because it failed (a
// supervisor or a group replacing it) learns why, not only that it is closed.
type closedError struct {
	base   error
	health interface{ Err() error }
}

func (e *closedError) Error() string {
	if f := e.health.Err(); f != nil {
		return e.base.Error() + ", after it failed: " + f.Error()
	}
	return e.base.Error()
}

func (e *closedError) Unwrap() []error {
	if f := e.health.Err(); f != nil {
		return []error{e.base, f}
	}
	return []error{e.base}
}
