package collective

import (
	"context"
	"errors"
	"fmt"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// NoColor is the color a rank passes to Split to join no new communicator.
const NoColor = backend.SplitNoColor

// Split makes a new communicator of the ranks of c that pass the same color, ranked by key
// (ties by their rank in c) (ncclCommSplit). Every rank of c must call it, each from its
// own goroutine (Split returns only once every rank of the new communicator has joined); a
// rank passing NoColor gets a nil *Comm and a nil error. opts configure the new
// communicator (WithSplitShare shares c's resources); it is blocking when c is, whatever
// opts say. NCCL splits as c's work and cannot stop a split without stopping c: when ctx
// ends first, Abort is called, or the split fails, c is aborted along with the new
// communicator (from another goroutine while a blocking split parks the device's actor).
func (c *Comm) Split(ctx context.Context, color, key int, opts ...Option) (*Comm, error) {
	if c == nil {
		return nil, core.Invalid("collective: Split of a nil communicator")
	}
	if color < 0 && color != NoColor {
		return nil, core.Invalid("collective: Split with color %d: a color is 0 or more, or NoColor", color)
	}
	cfg, err := configOf(opts)
	if err != nil {
		return nil, err
	}
	cfg.Blocking = c.blocking // NCCL's split call blocks or not as the parent does
	if err := c.alive("Split"); err != nil {
		return nil, err
	}
	h, err := core.Make(ctx, c.core(), func(rt backend.Device, _ *core.Tracker) (backend.Comm, error) {
		if err := c.alive("Split"); err != nil {
			return 0, err
		}
		var h backend.Comm
		err := c.parked(ctx, rt, func() (err error) {
			h, err = rt.CollCommSplit(c.h, color, key, cfg)
			return err
		})
		if errors.Is(err, ErrAborted) {
			return 0, err // c was aborted under the split: NCCL frees what it made
		}
		if err != nil && !errors.Is(err, backend.ErrCollInProgress) {
			if h != 0 {
				_ = rt.CollCommAbort(h)
			}
			return 0, err
		}
		return h, nil
	}, func(rt backend.Device, _ *core.Tracker, h backend.Comm) {
		if h != 0 {
			_ = rt.CollCommAbort(h)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("collective: Split of rank %d of %d on device %d: %w", c.rank, c.count, c.dev.Ordinal(), err)
	}
	if h == 0 {
		// NoColor: nothing to join, but c takes part in the split until NCCL is done (ready
		// aborts c when it cannot finish).
		return nil, c.ready(ctx, c.h, "splitting")
	}
	child := &Comm{dev: c.dev, h: h, blocking: c.blocking, anyAbort: c.anyAbort}
	if err := c.ready(ctx, h, "splitting"); err != nil {
		return nil, errors.Join(err, c.Abort(context.WithoutCancel(ctx)))
	}
	type info struct{ count, rank int }
	got, err := core.Run(ctx, c.core(), func(rt backend.Device, _ *core.Tracker) (info, error) {
		n, r, _, err := rt.CollCommInfo(h)
		return info{n, r}, err
	}).Await(ctx)
	if err != nil {
		_ = child.Abort(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("collective: Split of rank %d of %d on device %d: %w", c.rank, c.count, c.dev.Ordinal(), err)
	}
	child.count, child.rank = got.count, got.rank
	return child, nil
}
