package core

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Copies between two devices' buffers. The copy is queued on a stream of one of the two
// devices (the local one); the other buffer (the foreign one) belongs to another actor, which
// alone may check it and free it. So the foreign buffer is checked and held on its own actor
// before the copy is sent, and released there once the copy's future completes: a Close of it
// meanwhile waits for the hold, as it waits for its own device's streams.

// peerHolds counts, per buffer of a device, the copies of other devices' streams that use it,
// and keeps the Closes that wait for them. Actor thread only.
type peerHolds struct {
	n    map[*Buffer]int
	wait map[*Buffer][]func()
}

type peerHoldsKey struct{}

func (d *Device) peerHolds() *peerHolds {
	return d.Ext(peerHoldsKey{}, func() any {
		return &peerHolds{n: map[*Buffer]int{}, wait: map[*Buffer][]func(){}}
	}).(*peerHolds)
}

// afterPeerHolds runs fn once no other device's copy holds b: at once when none does. Actor
// thread only.
func (d *Device) afterPeerHolds(b *Buffer, fn func()) {
	h := d.peerHolds()
	if h.n[b] == 0 {
		fn()
		return
	}
	h.wait[b] = append(h.wait[b], fn)
}

// holdForPeer checks m on its own device's actor and holds it there for a copy on another
// device's stream; release gives the hold back (from any goroutine, once).
func holdForPeer(ctx context.Context, what string, m Mem) (p cuda.DevicePtr, n uint64, release func(), err error) {
	owner, err := Owner(what, m)
	if err != nil {
		return 0, 0, nil, err
	}
	b, _, _ := Region(m)
	type span struct {
		p cuda.DevicePtr
		n uint64
	}
	s, err := Run(ctx, owner, func(backend.Device, *Tracker) (span, error) {
		p, n, err := owner.Resolve(what, m)
		if err != nil {
			return span{}, err
		}
		owner.peerHolds().n[b]++
		return span{p, n}, nil
	}).Await(ctx)
	if err != nil {
		return 0, 0, nil, err
	}
	release = func() {
		// Post, not Run: it must reach the actor of a failed device too, where a Close may
		// wait for it. An actor already closed has freed the buffer with the device. From a
		// goroutine of its own: release runs as the copy's future completes, on the copying
		// device's actor thread, which must never block on another actor's full mailbox (that
		// actor may be blocked on this one's the same way).
		go owner.act.Post(context.Background(), func() {
			h := owner.peerHolds()
			if h.n[b]--; h.n[b] > 0 {
				return
			}
			delete(h.n, b)
			waiting := h.wait[b]
			delete(h.wait, b)
			for _, fn := range waiting {
				fn()
			}
		})
	}
	return s.p, s.n, release, nil
}

// CopyAcross queues, on s, a copy of all of src into the start of dst, where one of the two
// lives on s's device and the other on another device: a peer copy (cudaMemcpyPeerAsync,
// which the runtime stages through the host where the devices have no peer access). The
// foreign buffer is checked and held first, on its device's actor, from the calling goroutine,
// so operations sent after CopyAcross returns are ordered after it; it is released when the
// future completes. The future completes when the GPU has done the copy.
func CopyAcross(ctx context.Context, s *Stream, dst, src Mem) *Future {
	if s == nil {
		return refused(Tracking{}, Invalid("copy on a nil stream"))
	}
	local := s.dev
	dstDev, err := Owner("copy destination", dst)
	if err != nil {
		return refused(Tracking{}, err)
	}
	srcDev, err := Owner("copy source", src)
	if err != nil {
		return refused(Tracking{}, err)
	}
	var foreign Mem
	var what string
	fromPeer := dstDev == local && srcDev != local // else to one
	switch {
	case fromPeer:
		foreign, what = src, "copy source"
	case srcDev == local && dstDev != local:
		foreign, what = dst, "copy destination"
	default:
		return refused(Tracking{}, fmt.Errorf("%w: a copy from device %d to device %d queued on a stream of device %d: the stream must belong to one of the two",
			ErrWrongDevice, srcDev.ordinal, dstDev.ordinal, local.ordinal))
	}
	if !SameMachine(dstDev, srcDev) {
		return refused(Tracking{}, fmt.Errorf("%w: a copy from device %d (%s) to device %d (%s): the devices belong to different backends",
			ErrWrongDevice, srcDev.ordinal, srcDev.be.Name(), dstDev.ordinal, dstDev.be.Name()))
	}
	if err := s.alive(); err != nil {
		return refused(Tracking{}, err)
	}
	fp, fn, release, err := holdForPeer(ctx, what, foreign)
	if err != nil {
		return refused(Tracking{}, err)
	}
	return QueueTracked(ctx, s, func(rt backend.Device, _ *Tracker, h backend.Stream) error {
		var dp, sp cuda.DevicePtr
		var dn, sn uint64
		var err error
		if fromPeer {
			sp, sn = fp, fn
			if dp, dn, err = local.Resolve("copy destination", dst); err != nil {
				return err
			}
		} else {
			dp, dn = fp, fn
			if sp, sn, err = local.Resolve("copy source", src); err != nil {
				return err
			}
		}
		if sn > dn {
			return OutOfRange("copy of %d bytes into a %d-byte destination", sn, dn)
		}
		return rt.MemcpyPeerAsync(dp, dstDev.ordinal, sp, srcDev.ordinal, sn, h)
	}, Tracking{Done: func(error) { release() }})
}

// SameMachine reports whether a and b are devices of one machine as the runtime sees it: one
// backend, or two in-process CUDA runtime backends (every in-process cuda device is served by
// the one loaded libcudart, even when opened through separate actors).
func SameMachine(a, b *Device) bool {
	return a.be == b.be || (a.be.Name() == "cuda" && b.be.Name() == "cuda")
}
