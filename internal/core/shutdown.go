package core

import (
	"context"
	"errors"
	"fmt"
)

// ErrShutdown is wrapped, beside ErrClosed, by the error of every operation a Shutdown
// failed because its deadline passed before the operation completed.
var ErrShutdown = errors.New("gpuactor: device shut down")

// shutdownErr is the error of an operation a Shutdown failed.
func (d *Device) shutdownErr() error {
	return fmt.Errorf("%w before the operation completed (device %d, %s): %w", ErrShutdown, d.ordinal, d.be.Name(), ErrClosed)
}

// Shutdown closes the device within ctx: it refuses new work at once and waits for the work
// already sent, as Close does, until ctx ends. Then it fails what is left — messages not run
// yet, and the futures of operations the GPU has not finished — with an error wrapping
// ErrShutdown and ErrClosed, and returns ctx's error; the device finishes closing in the
// background, freeing everything once the GPU has passed the work it was given (which no
// deadline can cut short).
func (d *Device) Shutdown(ctx context.Context) error {
	if d == nil {
		return errNilDevice
	}
	if err := d.InHostFunc("Shutdown"); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- d.Close() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	d.aborting.Store(true)
	select {
	case err := <-done: // closed as the deadline passed
		return err
	default:
	}
	return fmt.Errorf("gpuactor: shutting down device %d: %w; what was left fails with ErrShutdown and the device finishes closing in the background", d.ordinal, ctx.Err())
}

// abortLeft fails the futures still waiting on the GPU, once a Shutdown's deadline passed:
// on the actor thread, from its idle hook (run at least every idle poll while work is in
// flight) and before the device's release settles its streams.
func (d *Device) abortLeft() {
	if !d.aborting.Load() || d.aborted {
		return
	}
	d.aborted = true
	d.tracker.abort(d.shutdownErr())
}
