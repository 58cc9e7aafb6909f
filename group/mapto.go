package group

import (
	"context"
	"errors"
	"fmt"
	"unsafe"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/streams"
)

// ShardResult is device memory a DeviceShard returns its results in: a *device.Buffer or a
// buffer of package alloc. MapTo closes it once it has gathered it.
type ShardResult interface {
	device.Mem
	Close(ctx context.Context) error
}

// DeviceShard is a function MapTo runs on one shard of its input, on device d and stream s: it
// returns the shard's results, in order, at the start of memory of d, queued on s or done.
type DeviceShard[T any] func(ctx context.Context, d *device.Device, s *streams.Stream, shard []T) (ShardResult, error)

// MapTo is Map with the results gathered in device memory: it splits items into shards as Map
// does, and copies each shard's results, len(shard) values of R, into dst (memory of any
// device, room for len(items) values) at the shard's offset, then closes the shard's memory.
// A shard on dst's device copies within the device; one on a device that can access dst's
// device directly (interop.CanAccessPeer) enables that access once per pair and makes a peer
// copy over the link; any other stages its results through host memory. MapTo returns once
// every shard has ended, with the first shard's error; when it returns nil, dst holds the
// results.
func MapTo[R cuda.Numeric, T any](ctx context.Context, g *Group, dst device.Mem, items []T, shards int, fn DeviceShard[T]) error {
	if fn == nil {
		return fmt.Errorf("%w: a nil shard function", device.ErrInvalidArgument)
	}
	owner, err := core.Owner("MapTo destination", dst)
	if err != nil {
		return err
	}
	size := uint64(unsafe.Sizeof(*new(R)))
	if _, _, n := core.Region(dst); n < uint64(len(items))*size {
		return fmt.Errorf("%w: MapTo of %d values of %d bytes into a %d-byte destination", device.ErrOutOfRange, len(items), size, n)
	}
	if len(items) == 0 {
		return nil
	}
	to := (*device.Device)(owner)
	shards, err = g.shardCount(shards, len(items))
	if err != nil {
		return err
	}
	fs := make([]actor.Waiter, shards)
	for k := range shards {
		lo, hi := k*len(items)/shards, (k+1)*len(items)/shards
		fs[k] = g.Submit(ctx, func(ctx context.Context, d *device.Device, s *streams.Stream) error {
			out, err := fn(ctx, d, s, items[lo:hi])
			if err != nil {
				return err
			}
			if out == nil {
				return fmt.Errorf("%w: the shard of items [%d, %d) returned no memory", device.ErrInvalidArgument, lo, hi)
			}
			n := uint64(hi-lo) * size
			err = gather[R](ctx, g, s, to, device.Range(dst, uint64(lo)*size, n), device.Range(out, 0, n))
			return errors.Join(err, out.Close(ctx))
		})
	}
	var first error
	for _, f := range fs {
		if err := f.Wait(context.WithoutCancel(ctx)); err != nil && first == nil { // every shard ends before MapTo returns
			first = err
		}
	}
	return first
}

// shardCount is how many shards Map and MapTo cut n items into: shards, or four per healthy
// (or restarting) device when shards <= 0, and at most n.
func (g *Group) shardCount(shards, n int) (int, error) {
	if shards <= 0 {
		for _, m := range g.members {
			if m.live() {
				shards += 4
			}
		}
		if shards == 0 {
			return 0, ErrNoDevice
		}
	}
	return min(shards, n), nil
}

// gather copies src, on s's device, into dst, on device to, ordered after the work queued on
// s, and waits for it.
func gather[R cuda.Numeric](ctx context.Context, g *Group, s *streams.Stream, to *device.Device, dst, src device.Slice) error {
	if from := s.Device(); from == to || g.peerLink(ctx, from, to) {
		return s.Copy(ctx, dst, src).Wait(ctx)
	}
	host := make([]R, src.Size()/uint64(unsafe.Sizeof(*new(R))))
	if err := streams.CopyFromDevice(ctx, s, host, src).Wait(ctx); err != nil {
		return err
	}
	return streams.CopyToDevice(ctx, streams.Default(to), dst, host).Wait(ctx)
}

// peerLink reports whether from can access to's memory directly, enabling that access the
// first time: asked once per pair and kept for the group's life. An error (devices of two
// backends, a closed device) counts as no link, and is asked again next time.
func (g *Group) peerLink(ctx context.Context, from, to *device.Device) bool {
	key := [2]*device.Device{from, to}
	if v, ok := g.peers.Load(key); ok {
		return v.(bool)
	}
	ok, err := interop.CanAccessPeer(ctx, from, to)
	if err == nil && ok {
		err = interop.EnablePeerAccess(ctx, from, to)
	}
	if err != nil {
		return false
	}
	g.peers.Store(key, ok)
	return ok
}
