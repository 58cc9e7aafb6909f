package remote

import (
	"context"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// Posted requests. A stream operation (a launch, a copy, a memset, an event record…) is
// posted: sent without waiting for the worker's answer, so the parent goes on while the
// worker queues it, as a launch in process returns once queued. The worker runs requests in
// the order they came, posted or not, so a later call sees every earlier operation queued.
//
// A posted operation's error cannot be its own answer. The worker keeps the first error of
// each stream and answers it to the next call that asks after that stream's work: its
// StreamQuery or StreamSynchronize, an EventQuery or EventSynchronize of an event last
// recorded on it, or the device's Synchronize. That is where the device actor learns of it in
// any case, since its futures complete through the event queries of its completion tracking:
// the operations behind that event fail with the error, as an operation whose launch failed
// in process fails its own future. A sticky error poisons the device: the worker answers it to
// the next call of any kind, and exits.
//
// On the wire a posted request is the method, the stream, then the method's own fields.

// isPosted reports whether requests of method m are posted: those of the backend methods
// marked //remote:posted (serve_gen.go's table).
func isPosted(m method) bool { return m < numMethods && table[m].posted }

// posted starts a posted request of method m on stream s.
func posted(m method, s backend.Stream) enc {
	e := request(m)
	e.u64(uint64(s))
	return e
}

// post sends a posted request; it returns once the request is in the worker's queue.
func (d *Device) post(e enc) error { return d.b.post(e) }

// postVoid posts m on s with scalar arguments.
func (d *Device) postVoid(m method, s backend.Stream, args ...uint64) error {
	e := posted(m, s)
	for _, a := range args {
		e.u64(a)
	}
	return d.post(e)
}

func (b *Backend) post(e enc) error {
	err := b.proc.Post(context.Background(), e.b)
	e.recycle()
	if err != nil {
		return b.gone(err)
	}
	return nil
}

// deferred is the worker's record of posted operations' errors, until a call collects them.
type deferred struct {
	failed   map[backend.Stream]error         // each stream's first error not yet answered
	recorded map[backend.Event]backend.Stream // the stream each event was last recorded on
	poison   error                            // a sticky error of a posted operation
}

// keep records a posted operation's error on stream s.
func (q *deferred) keep(s backend.Stream, err error, sticky bool) {
	if sticky {
		if q.poison == nil {
			q.poison = err
		}
		return
	}
	if q.failed == nil {
		q.failed = map[backend.Stream]error{}
	}
	if _, ok := q.failed[s]; !ok {
		q.failed[s] = err
	}
}

// pending reports whether any error waits for a call.
func (q *deferred) pending() bool { return q.poison != nil || len(q.failed) > 0 }

// take returns, and forgets, the error a call of method m must answer before it runs: the
// poison, or the posted error of the stream m asks after. in is the call's fields, read from a
// copy so the method still reads them.
func (q *deferred) take(m method, in dec) error {
	if q.poison != nil {
		return q.poison // answered on: the worker stops serving after a sticky error
	}
	if len(q.failed) == 0 {
		return nil
	}
	var s backend.Stream
	switch m {
	case mStreamQuery, mStreamSynchronize:
		s = backend.Stream(in.u64())
	case mEventQuery, mEventSynchronize:
		var ok bool
		if s, ok = q.recorded[backend.Event(in.u64())]; !ok {
			return nil
		}
	case mSynchronize:
		for s, err := range q.failed {
			delete(q.failed, s)
			return err
		}
		return nil
	default:
		return nil
	}
	err, ok := q.failed[s]
	if !ok {
		return nil
	}
	delete(q.failed, s)
	return err
}

// note keeps what later calls need of a call or posted operation that succeeded: where each
// event was recorded, and that destroyed streams and events are gone. in is the operation's
// fields.
func (q *deferred) note(m method, s backend.Stream, in dec) {
	switch m {
	case mEventRecord:
		if q.recorded == nil {
			q.recorded = map[backend.Event]backend.Stream{}
		}
		q.recorded[backend.Event(in.u64())] = s
	case mEventDestroy:
		delete(q.recorded, backend.Event(in.u64()))
	case mStreamDestroy:
		delete(q.failed, backend.Stream(in.u64()))
	}
}
