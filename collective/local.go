package collective

import (
	"context"
	"errors"
	"sync"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/core"
)

// NewLocal makes one communicator over devs, device devs[i] as rank i, and returns its
// ranks in that order: NCCL's ncclCommInitAll done the actor way. One rank makes the ID
// (NewID on devs[0]) and every device's actor joins as its rank concurrently (Join), so
// each rank is driven, from its birth, by the thread that drives its device.
// ncclCommInitAll itself would make every rank from the calling thread, switching devices
// inside one call: a thread that is no device's actor would own every device's context for
// its length, against the rule that only a device's actor touches it.
//
// When ctx ends, or any rank fails to join, every rank is aborted and the error says which
// failed. The devices must be distinct GPUs (NCCL refuses two ranks on one GPU).
func NewLocal(ctx context.Context, devs []*device.Device, opts ...Option) ([]*Comm, error) {
	if len(devs) == 0 {
		return nil, core.Invalid("collective: NewLocal of no devices")
	}
	seen := map[*device.Device]int{}
	for i, d := range devs {
		if d == nil {
			return nil, core.Invalid("collective: NewLocal: device %d of %d is nil", i, len(devs))
		}
		if j, dup := seen[d]; dup {
			return nil, core.Invalid("collective: NewLocal: device %d given twice (ranks %d and %d)", d.Ordinal(), j, i)
		}
		seen[d] = i
	}
	if _, err := configOf(opts); err != nil {
		return nil, err
	}
	id, err := NewID(ctx, devs[0])
	if err != nil {
		return nil, err
	}
	return joinAll(ctx, len(devs), func(ctx context.Context, rank int) (*Comm, error) {
		return Join(ctx, devs[rank], id, len(devs), rank, opts...)
	})
}

// joinAll runs join for every rank concurrently. When one fails the others' ctx ends (so
// their joins abort rather than wait for the rank that failed) and every rank that joined is
// aborted.
func joinAll(parent context.Context, n int, join func(ctx context.Context, rank int) (*Comm, error)) ([]*Comm, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	comms := make([]*Comm, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() {
			comms[r], errs[r] = join(ctx, r)
			if errs[r] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	var failures, all []error
	for _, err := range errs {
		if err == nil {
			continue
		}
		all = append(all, err)
		// A rank aborted only because another failed adds nothing to why.
		if parent.Err() != nil || !errors.Is(err, context.Canceled) {
			failures = append(failures, err)
		}
	}
	if len(all) == 0 {
		return comms, nil
	}
	if len(failures) == 0 {
		failures = all
	}
	for _, c := range comms {
		if c != nil {
			_ = c.Abort(context.WithoutCancel(parent))
		}
	}
	return nil, errors.Join(failures...)
}
