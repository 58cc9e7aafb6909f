package core

import (
	"context"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// SetPriority sets the stream's priority attribute (cudaStreamAttributePriority), refusing a
// priority outside the device's range, and keeps Priority current.
func (s *Stream) SetPriority(ctx context.Context, p int) error {
	_, err := RunOn(ctx, s, func(rt backend.Device, _ *Tracker, h backend.Stream) (struct{}, error) {
		least, greatest, err := rt.StreamPriorityRange()
		if err != nil {
			return struct{}{}, err
		}
		if p > least || p < greatest {
			return struct{}{}, Invalid("stream priority %d outside the device's range [%d (highest), %d (lowest)]", p, greatest, least)
		}
		if err := rt.StreamSetAttribute(h, backend.StreamAttrPriority, backend.StreamAttrValue{Priority: int32(p)}); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, s.refreshPriority(rt, h)
	}).Await(ctx)
	return err
}

// refreshPriority reads the stream's priority back from the runtime, which is what Priority
// reports after an attribute changed it; on the actor thread.
func (s *Stream) refreshPriority(rt backend.Device, h backend.Stream) error {
	p, err := rt.StreamGetPriority(h)
	if err != nil {
		return err
	}
	s.priority.Store(int64(p))
	return nil
}

// CopyAttributes copies src's attributes to s (cudaStreamCopyAttributes); both must be of one
// device. s's Priority is then the runtime's.
func (s *Stream) CopyAttributes(ctx context.Context, src *Stream) error {
	if src == nil {
		return Invalid("CopyAttributes from a nil stream")
	}
	if src.dev != s.dev {
		return WrongDevice("stream", src.dev, s.dev)
	}
	_, err := RunOn(ctx, s, func(rt backend.Device, _ *Tracker, h backend.Stream) (struct{}, error) {
		if err := src.alive(); err != nil {
			return struct{}{}, err
		}
		if err := rt.StreamCopyAttributes(h, src.h); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, s.refreshPriority(rt, h)
	}).Await(ctx)
	return err
}

// RecordWithFlags queues a record of e on s with cudaEventRecordWithFlags flags; the future
// completes when the GPU reaches it. An external record (backend.EventRecordExternal) on a
// stream that is not capturing is queued as a plain record: the runtime refuses the flag
// there (cudaErrorIllegalState), and outside a capture the two mean the same.
func (e *Event) RecordWithFlags(ctx context.Context, s *Stream, flags uint32) *Future {
	n := e.issued.Add(1)
	f := Queue(ctx, s, func(rt backend.Device, _ *Tracker, h backend.Stream) error {
		defer e.noteRecorded(n)
		if err := e.alive(); err != nil {
			return err
		}
		if flags&backend.EventRecordExternal != 0 {
			st, err := rt.StreamIsCapturing(h)
			if err != nil {
				return err
			}
			if st == backend.CaptureNone {
				flags &^= backend.EventRecordExternal
			}
		}
		return rt.EventRecordWithFlags(e.h, h, flags)
	})
	e.last.Store(f)
	return f
}
