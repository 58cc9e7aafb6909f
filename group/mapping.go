package group

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// Shard is a function Map runs on one shard of its input, on device d and stream s: it returns
// the shard's results, in order.
type Shard[T, R any] func(ctx context.Context, d *device.Device, s *streams.Stream, shard []T) ([]R, error)

// Map splits items into contiguous shards, several per device so that a faster device takes
// more of them, runs fn on each as a job of g, and returns the results in the order of items.
// It fails with the first shard's error, once every shard has ended. shards <= 0 means four
// per healthy (or restarting) device.
func Map[T, R any](ctx context.Context, g *Group, items []T, shards int, fn Shard[T, R]) ([]R, error) {
	if fn == nil {
		return nil, fmt.Errorf("%w: a nil shard function", device.ErrInvalidArgument)
	}
	if len(items) == 0 {
		return nil, nil
	}
	shards, err := g.shardCount(shards, len(items))
	if err != nil {
		return nil, err
	}
	results := make([][]R, shards)
	fs := make([]actor.Waiter, shards)
	for k := range shards {
		lo, hi := k*len(items)/shards, (k+1)*len(items)/shards
		fs[k] = g.Submit(ctx, func(ctx context.Context, d *device.Device, s *streams.Stream) error {
			r, err := fn(ctx, d, s, items[lo:hi])
			results[k] = r
			return err
		})
	}
	var errs []error
	for _, f := range fs {
		if err := f.Wait(context.WithoutCancel(ctx)); err != nil { // every shard ends before Map returns
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errs[0]
	}
	var out []R
	for _, r := range results {
		out = append(out, r...)
	}
	return out, nil
}
