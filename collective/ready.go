package collective

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Polling NCCL's non-blocking calls. A communicator's join, split or finalize goes on in
// NCCL's own threads; ncclCommGetAsyncError says when it is done. The caller's goroutine
// polls it through short calls on the device's actor (ready), so the actor serves other work
// between polls and a rank waiting for a slow peer holds no thread. An operation NCCL is
// still setting up (the first one between two ranks connects them) is polled on the actor
// thread itself (settle): nothing else may touch the stream until NCCL has queued it.

// The poll interval grows from pollMin to pollMax: joining takes milliseconds to seconds,
// and a poll costs one message to the actor.
const (
	pollMin = 20 * time.Microsecond
	pollMax = 2 * time.Millisecond
)

// settleSpin is how long settle polls without sleeping. A non-blocking communicator hands
// every launch to NCCL's own thread, which queues the kernel within microseconds; a sleep of
// the Go runtime's granularity there would cost each operation far more than the transfer of
// a megabyte. Only an operation still connecting its ranks outlasts the spin.
const settleSpin = 500 * time.Microsecond

// ready waits until h (c's comm, or one Split is making) has nothing in progress. When ctx
// ends first, or NCCL reports a failure, h is aborted and the error says why.
func (c *Comm) ready(ctx context.Context, h backend.Comm, what string) error {
	delay := pollMin
	t := time.NewTimer(delay)
	defer t.Stop()
	for {
		err := core.Do(ctx, c.core(), func(rt backend.Device, _ *core.Tracker) error {
			if c.abortReq.Load() && h == c.h {
				return ErrAborted
			}
			return rt.CollCommAsyncError(h)
		})
		switch {
		case err == nil:
			return nil
		case errors.Is(err, backend.ErrCollInProgress):
		case ctx.Err() != nil:
			abortErr := c.abortHandle(context.WithoutCancel(ctx), h)
			return errors.Join(fmt.Errorf("collective: rank %d of %d on device %d %s: %w: %w", c.rank, c.count, c.dev.Ordinal(), what, ErrAborted, ctx.Err()), abortErr)
		default:
			abortErr := c.abortHandle(context.WithoutCancel(ctx), h)
			return errors.Join(fmt.Errorf("collective: rank %d of %d on device %d %s: %w", c.rank, c.count, c.dev.Ordinal(), what, err), abortErr)
		}
		t.Reset(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		delay = min(2*delay, pollMax)
	}
}

// abortHandle aborts h: c itself (once) or a comm Split was making for it.
func (c *Comm) abortHandle(ctx context.Context, h backend.Comm) error {
	return core.Do(ctx, c.core(), func(rt backend.Device, _ *core.Tracker) error {
		if h == c.h {
			return c.abortOnThread(rt)
		}
		return rt.CollCommAbort(h)
	})
}

// settle waits, on the actor thread, until NCCL has finished queuing what CollLaunch left
// in progress. Abort, or ctx's end, aborts the communicator: NCCL cannot take back one
// operation, and the actor must not wait on a peer that never comes.
func (c *Comm) settle(ctx context.Context, rt backend.Device) error {
	delay := pollMin
	spinUntil := time.Now().Add(settleSpin)
	for {
		err := rt.CollCommAsyncError(c.h)
		if !errors.Is(err, backend.ErrCollInProgress) {
			return err
		}
		if c.abortReq.Load() || ctx.Err() != nil {
			abortErr := c.abortOnThread(rt)
			return errors.Join(fmt.Errorf("collective: an operation of rank %d of %d on device %d: %w", c.rank, c.count, c.dev.Ordinal(), ErrAborted), context.Cause(ctx), abortErr)
		}
		if time.Now().Before(spinUntil) {
			continue
		}
		time.Sleep(delay)
		delay = min(2*delay, pollMax)
	}
}
