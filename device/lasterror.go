package device

import (
	"context"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// LastError returns and clears the runtime's last error on the device's actor thread
// (cudaGetLastError).
//
// The runtime keeps its last error per OS thread. Behind an actor one thread makes every call
// of the device, and gpuactor checks each call's result and hands it to the caller that asked,
// so LastError adds nothing for a call that failed in front of you: what it tells is the most
// recent error any call on this device recorded since the last LastError, whoever made that
// call — a failed launch, a refused limit, another goroutine's bad argument, or a call
// gpuactor made itself and handled (enabling peer access that was already enabled, say) — and
// an asynchronous error the runtime has seen but no call has returned yet. It is a diagnostic
// of the device as a whole, not of one caller's operations. Once a sticky error
// failed the device, the device refuses every call and LastError returns ErrDeviceFailed. It
// returns nil when there is nothing to report, and returns once the actor has asked.
func (d *Device) LastError(ctx context.Context) error {
	return d.lastError(ctx, backend.Device.LastError)
}

// PeekError is LastError without clearing it (cudaPeekAtLastError): a later LastError or
// PeekError returns the same error.
func (d *Device) PeekError(ctx context.Context) error {
	return d.lastError(ctx, backend.Device.PeekLastError)
}

func (d *Device) lastError(ctx context.Context, read func(backend.Device) error) error {
	var last error
	err := core.Do(ctx, d.core(), func(rt backend.Device, _ *core.Tracker) error {
		last = read(rt)
		return nil
	})
	if err != nil {
		return err
	}
	return last
}
