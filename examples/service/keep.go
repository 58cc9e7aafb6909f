package main

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// keptBuffers are device buffers kept per stream from one job to the next (-reuse-buffers),
// so that a request allocates and frees nothing on the device. On an isolated device a
// MallocAsync is a call to the worker (its answer is the address), which the actor collects
// at the buffer's first use, a request's three together; this is the way to see what they
// and the frees cost the service's tail (docs/design/service-tail.md). A stream runs one job
// at a time (the group lends it to one), and its work runs in order, so the next job's copies
// into the buffers wait for the last job's copy out of them.
type keptBuffers struct {
	m      sync.Map // *streams.Stream → *streamBuffers
	allocs atomic.Int64
}

// streamBuffers are one stream's buffers, each of n elements.
type streamBuffers struct {
	dx, dy, dout *alloc.Buffer[float32]
	n            int
}

// saxpy runs out = a*x + y on stream st of device d in st's kept buffers, made or grown to
// len(x) first. After a failure the buffers are freed and forgotten: the stream's next job
// makes new ones (on a failed device the frees fail, and nothing is left to free).
func (k *keptBuffers) saxpy(ctx context.Context, prog *device.Program, d *device.Device, st *streams.Stream, a float32, x, y, out []float32) error {
	b, err := k.get(ctx, st, len(x))
	if err != nil {
		return err
	}
	if err := saxpyIn(ctx, prog, d, st, a, x, y, out, b.dx, b.dy, b.dout); err != nil {
		if ctx.Err() == nil { // a cancelled request leaves the buffers as good as they were
			k.drop(ctx, st)
		}
		return err
	}
	return nil
}

// get is st's buffers, of at least n elements each.
func (k *keptBuffers) get(ctx context.Context, st *streams.Stream, n int) (*streamBuffers, error) {
	if v, ok := k.m.Load(st); ok {
		if b := v.(*streamBuffers); b.n >= n {
			return b, nil
		}
		k.drop(ctx, st)
	}
	b := &streamBuffers{n: n}
	var err error
	for _, p := range []**alloc.Buffer[float32]{&b.dx, &b.dy, &b.dout} {
		if *p, _, err = alloc.MallocAsync[float32](ctx, st, n); err != nil {
			_ = b.close(ctx)
			return nil, err
		}
		k.allocs.Add(1)
	}
	k.m.Store(st, b)
	return b, nil
}

// drop frees st's buffers, ordered on st after its work, and forgets them.
func (k *keptBuffers) drop(ctx context.Context, st *streams.Stream) {
	if v, ok := k.m.LoadAndDelete(st); ok {
		_ = v.(*streamBuffers).close(ctx)
	}
}

func (b *streamBuffers) close(ctx context.Context) error {
	free := context.WithoutCancel(ctx) // a free must be queued even when the request ended
	var errs []error
	for _, p := range []*alloc.Buffer[float32]{b.dx, b.dy, b.dout} {
		if p != nil {
			errs = append(errs, p.Close(free))
		}
	}
	return errors.Join(errs...)
}

// release frees every kept buffer: before the group closes its streams, and before a check
// that the devices hold no stream-ordered memory. The frees of a failed device's buffers fail;
// those are not counted.
func (k *keptBuffers) release(ctx context.Context) {
	k.m.Range(func(st, _ any) bool {
		k.drop(ctx, st.(*streams.Stream))
		return true
	})
}
