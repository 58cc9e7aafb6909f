package core

import (
	"errors"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// The stream-ordered pools give memory freed above their release thresholds back to the
// device when a synchronization observes the free: cudaStreamSynchronize of the stream that
// freed, cudaEventSynchronize of an event recorded on it after the free, or
// cudaDeviceSynchronize. Seeing the free complete (a query, a callback), or synchronizing
// another stream, is not enough. Synchronize must not block the actor on work queued after
// it, so it synchronizes, once the GPU has passed everything sent before it, each stream that
// freed and has no work in flight: that returns at once, and lets the pools release.

// FreedOn notes that a stream-ordered free was just queued on s. Actor thread only.
func (t *Tracker) FreedOn(s backend.Stream) {
	if t.freed == nil {
		t.freed = map[backend.Stream]struct{}{}
	}
	t.freed[s] = struct{}{}
}

// releaseFreed synchronizes each stream noted by FreedOn that is idle now, so that the pools
// release what was freed on it; a stream with work in flight keeps its note for the next
// Synchronize. Actor thread only.
func (t *Tracker) releaseFreed() error {
	var errs []error
	for s := range t.freed {
		if !t.passedAll(t.streams[s]) {
			continue // busy: synchronizing it would wait for that work
		}
		delete(t.freed, s)
		errs = append(errs, t.dev.StreamSynchronize(s))
	}
	return errors.Join(errs...)
}

// passedAll reports whether the GPU has passed all of tr's work: it holds no callback without
// a watermark, and every watermark in flight has completed (one may be completing now: its
// callbacks run before the track advances past it).
func (t *Tracker) passedAll(tr *track) bool {
	if tr == nil || tr.idx < 0 {
		return true
	}
	if len(tr.open) > 0 {
		return false
	}
	for _, m := range tr.marks[tr.first:] {
		if t.dev.EventQuery(m.ev) != nil {
			return false
		}
	}
	return true
}
