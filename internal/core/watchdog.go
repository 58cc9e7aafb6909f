package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// ErrStuck is wrapped, beside ErrDeviceFailed, by the failure of a device whose watchdog saw
// the GPU pass none of its operations for longer than its deadline: a kernel that never ends
// reports no error, and blocks every synchronization, its own stream and the device's
// release for good; only ending the process frees the GPU (docs/faults.md).
var ErrStuck = errors.New("gpuactor: device stuck")

// watch is the watchdog, run from the actor's idle hook while work is in flight: when the
// oldest watermark in flight has waited longer than the deadline, the device is stuck.
func (d *Device) watch(now time.Duration) {
	if d.watchdog <= 0 || d.stuck.Load() {
		return
	}
	if age := d.tracker.oldestMark(now); age > d.watchdog {
		d.stall(age)
	}
}

// stall fails the device as stuck: everything still waiting on the GPU — operations'
// futures, and the callbacks that Synchronize, event waits and the Close of what the device
// made wait through — completes at once with the failure, later calls are refused, and its
// release abandons what it holds instead of waiting for a GPU that will not answer.
func (d *Device) stall(age time.Duration) {
	d.stuck.Store(true)
	err := fmt.Errorf("%w: %w: device %d passed none of its work for %v (watchdog %v); a kernel may never end, and only ending the process frees the GPU",
		ErrDeviceFailed, ErrStuck, d.ordinal, age.Round(time.Millisecond), d.watchdog)
	if d.health.Fail(err) {
		d.log.Error("device stuck", zap.Duration("age", age), zap.Duration("watchdog", d.watchdog))
	}
	d.tracker.fail(d.Err())
	if d.onStuck != nil {
		d.onStuck()
	}
}

// abandon is the release of a stuck device: nothing it holds can be freed without waiting for
// the GPU (cudaFree and the streams' synchronizations wait for the kernel that never ends), so
// it forgets everything, which the process frees as it exits.
func (d *Device) abandon() {
	d.staging.abandon()
	d.acct.forgetAll()
	d.log.Warn("stuck device closed: its memory, streams and modules are left to the process's exit")
}

// Health checks the device end to end before ctx ends: it returns the device's failure when
// it has one, else sends the actor a message that has the GPU pass a point on a stream of the
// device's own, and waits for the GPU to get there. An error wrapping ctx's means no answer in
// time (the actor or the GPU is busy or stuck: see WithWatchdog).
func (d *Device) Health(ctx context.Context) error {
	if err := d.Err(); err != nil {
		return err
	}
	err := RunTracked(ctx, d, func(rt backend.Device, tr *Tracker, done func(error)) error {
		if d.healthS == 0 {
			h, err := rt.StreamCreate(backend.StreamNonBlocking, 0)
			if err != nil {
				return fmt.Errorf("gpuactor: creating the health check's stream: %w", err)
			}
			d.healthS = h
		}
		tr.AfterMarked(d.healthS, done)
		return nil
	}).Wait(ctx)
	if err != nil && ctx.Err() != nil && !errors.Is(err, ErrDeviceFailed) {
		return fmt.Errorf("gpuactor: device %d health: no answer before the context ended: %w", d.ordinal, err)
	}
	return err
}
