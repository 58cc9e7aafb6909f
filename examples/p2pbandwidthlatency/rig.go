package main

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/streams"
)

// rig is what one matrix of the C sample allocates at its start and frees at its end: the
// delay flag in pinned host memory, and on every device two buffers of numElems ints (the
// second, buffersD2D, for copies within the device), timing events and streams.
type rig struct {
	flag     *alloc.Pinned[int32]
	flagPtrs []cuda.DevicePtr // the flag's address on each device
	views    *sample.HostViews[int32]

	bufs, bufsD2D []*device.Buffer
	ptrs, ptrsD2D []cuda.DevicePtr // the buffers' addresses, for the SM copy kernel
	start, stop   []*streams.Event
	streams       [][]*streams.Stream // per device: the matrix's streams (stream, or stream0 and stream1)

	closers []func(context.Context) error // in the order they were made
}

// newRig allocates a rig with nstreams streams a device (non-blocking, as the C sample's
// cudaStreamNonBlocking ones) and buffers zeroed as cudaMemset zeroes them. On error what was
// made is freed.
func (b *bench) newRig(ctx context.Context, numElems, nstreams int) (_ *rig, err error) {
	r := &rig{views: b.views}
	defer func() {
		if err != nil {
			err = errors.Join(err, r.close(ctx))
		}
	}()

	// cudaHostAllocPortable: pinned for every device. Under unified addressing every device
	// reads such memory at its host address; gpuactor asks for the mapping explicitly
	// (Mapped), which gives the same address.
	if r.flag, err = alloc.MallocPinned[int32](ctx, b.devs[0], 1, alloc.Portable, alloc.Mapped); err != nil {
		return nil, err
	}
	flag := r.flag
	r.closers = append(r.closers, flag.Close)
	p, err := flag.DevicePtr(ctx) // every device's address for it, under unified addressing
	if err != nil {
		return nil, err
	}
	b.views.Add(p, flag.Host())
	r.closers = append(r.closers, func(context.Context) error { b.views.Remove(p); return nil })
	for range b.devs {
		r.flagPtrs = append(r.flagPtrs, p)
	}

	n := len(b.devs)
	r.bufs, r.bufsD2D = make([]*device.Buffer, n), make([]*device.Buffer, n)
	r.ptrs, r.ptrsD2D = make([]cuda.DevicePtr, n), make([]cuda.DevicePtr, n)
	r.start, r.stop = make([]*streams.Event, n), make([]*streams.Event, n)
	r.streams = make([][]*streams.Stream, n)
	for i, d := range b.devs {
		for _, buf := range []struct {
			b *[]*device.Buffer
			p *[]cuda.DevicePtr
		}{{&r.bufs, &r.ptrs}, {&r.bufsD2D, &r.ptrsD2D}} {
			m, err := d.MallocBytes(ctx, uint64(numElems)*4)
			if err != nil {
				return nil, err
			}
			r.closers = append(r.closers, m.Close)
			(*buf.b)[i] = m
			if (*buf.p)[i], err = m.DevicePtr(ctx); err != nil {
				return nil, err
			}
			if err := streams.Default(d).Memset(ctx, m, 0).Wait(ctx); err != nil {
				return nil, err
			}
		}
		for _, e := range []*[]*streams.Event{&r.start, &r.stop} {
			ev, err := streams.NewEvent(ctx, d)
			if err != nil {
				return nil, err
			}
			r.closers = append(r.closers, ev.Close)
			(*e)[i] = ev
		}
		for range nstreams {
			s, err := streams.New(ctx, d)
			if err != nil {
				return nil, err
			}
			r.streams[i] = append(r.streams[i], s)
		}
	}
	return r, nil
}

// close frees what newRig made and returns every error: the streams first, every device's,
// since a stream's Close waits for its work, which uses the rest (an SM copy uses another
// device's buffer by address, which that buffer's Close cannot see); then the rest, newest
// first. It releases the flag before, so that a delay kernel left running after an error does
// not hold its stream's Close until its timeout.
func (r *rig) close(ctx context.Context) error {
	if r.flag != nil {
		r.release()
	}
	var errs []error
	for _, ss := range r.streams {
		for _, s := range ss {
			errs = append(errs, s.Close(ctx))
		}
	}
	r.streams = nil
	for i := len(r.closers) - 1; i >= 0; i-- {
		errs = append(errs, r.closers[i](ctx))
	}
	r.closers = nil
	return errors.Join(errs...)
}

// hold sets the flag to 0: a delay kernel launched next holds its stream.
func (r *rig) hold() { atomic.StoreInt32(&r.flag.Host()[0], 0) }

// release sets the flag to 1: the delay kernel returns and the work queued behind it runs.
func (r *rig) release() { atomic.StoreInt32(&r.flag.Host()[0], 1) }
