package group

import (
	"errors"
	"fmt"

	"github.com/gpuactor/gpuactor/device"
)

var (
	// ErrNoDevice: the group has no device able to take work (none given, or all failed).
	ErrNoDevice = errors.New("group: no healthy device")
	// ErrQueueFull: Submit with WithFailFast found the queue full.
	ErrQueueFull = errors.New("group: queue full")
	// ErrTooBig: a job declared more memory (Bytes) than any device of the group has.
	ErrTooBig = errors.New("group: job needs more memory than any device has")
	// ErrDeviceReplaced: a restart (WithRestart) replaced the job's device while the job ran.
	// The error is a *DeviceError naming both generations.
	ErrDeviceReplaced = errors.New("group: device replaced")
)

// DeviceError is the error of a job whose device failed under it; it wraps
// device.ErrDeviceFailed, the job's own error, and, when a restart replaced the device before
// the job ended, ErrDeviceReplaced. With WithRestart, a device's generations count its
// openings within the group: 1 is the device given to New, and each restart makes the next;
// without it both generations are 0.
type DeviceError struct {
	Ordinal    int    // the device's ordinal
	Generation uint64 // the generation the job ran on
	Now        uint64 // the device's generation when the job ended: above Generation once replaced
	Err        error  // the job's error
}

// Error names the device and its generations, e.g. "group: device 1 (generation 2) failed
// under the job and was replaced by generation 3 while it ran: …".
func (e *DeviceError) Error() string {
	var why string
	switch {
	case e.Now > e.Generation:
		why = fmt.Sprintf("device %d (generation %d) failed under the job and was replaced by generation %d while it ran", e.Ordinal, e.Generation, e.Now)
	case e.Generation > 0:
		why = fmt.Sprintf("device %d (generation %d) failed under the job", e.Ordinal, e.Generation)
	default:
		why = fmt.Sprintf("device %d failed under the job", e.Ordinal)
	}
	if e.Err == nil {
		return "group: " + why
	}
	return "group: " + why + ": " + e.Err.Error()
}

// Unwrap gives device.ErrDeviceFailed, the job's error, and ErrDeviceReplaced once replaced.
func (e *DeviceError) Unwrap() []error {
	var errs []error
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	if !errors.Is(e.Err, device.ErrDeviceFailed) {
		errs = append(errs, device.ErrDeviceFailed)
	}
	if e.Now > e.Generation {
		errs = append(errs, ErrDeviceReplaced)
	}
	return errs
}

// deviceError is the error of job j, which failed with err on m's generation gn after gn's
// device failed.
func (m *member) deviceError(gn *generation, err error) error {
	if m.sup == nil { // no restarts: one generation, not worth naming
		return &DeviceError{Ordinal: gn.dev.Ordinal(), Err: err}
	}
	return &DeviceError{Ordinal: gn.dev.Ordinal(), Generation: gn.number, Now: m.cur.Load().number, Err: err}
}
