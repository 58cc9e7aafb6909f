package core

import "github.com/gpuactor/gpuactor/internal/backend"

// Drained reports whether the GPU has passed all the work queued on s so far, asking the
// runtime at once (cudaStreamQuery) rather than recording a watermark for the next poll to
// find passed; when it has, every callback registered on s runs now, since the GPU has passed
// their work too. An operation queued behind work that has completed (the free of a buffer
// whose last use was awaited) so costs one query instead of a watermark cycle: a record, the
// GPU reaching it, and queries at the tracker's pace.
//
// It reports false, leaving s to the watermarks, while any capture is open (a query of a
// captured stream ends its capture), from inside a walk over the tracks (a poll, Settle: their
// callbacks may come here), and when the query reports anything but idle: a sticky error is
// left to the watermarks, which name the launch it followed. Actor thread only.
func (t *Tracker) Drained(s backend.Stream) bool {
	if t.walks > 0 || len(t.capture.modes) > 0 {
		return false
	}
	if t.dev.StreamQuery(s) != nil {
		return false
	}
	if tr := t.streams[s]; tr != nil && tr.idx >= 0 {
		t.settleDrained(tr)
	}
	return true
}

// settleDrained runs every callback of tr, whose stream the GPU has drained, and idles it.
func (t *Tracker) settleDrained(tr *track) {
	marks := tr.marks[tr.first:]
	open := tr.open
	// The track is emptied before any callback runs: one may register more work on it (into
	// open; only a poll records watermarks, so marks' array is not written meanwhile).
	tr.marks, tr.first, tr.open, tr.urgent, tr.next = tr.marks[:0], 0, nil, false, nil
	t.idle(tr)
	t.walks++ // a callback that comes back here finds its own way
	for i, m := range marks {
		t.finish(m.done, nil)
		t.keepSpare(m.done)
		t.releaseMark(m)
		marks[i] = mark{}
	}
	t.finish(open, nil)
	t.keepSpare(open)
	t.walks--
}

// drainActive settles, through Drained, the streams with work tracked whose work the GPU has
// passed, up to the first that is still busy: a barrier over every stream (AfterAll) waits
// for that one anyway, and the others' watermarks pass while it does.
func (t *Tracker) drainActive() {
	for i := len(t.active) - 1; i >= 0 && i < len(t.active); i-- {
		tr := t.active[i]
		if tr.retired { // its stream is destroyed: only its watermarks can be asked
			continue
		}
		if !t.Drained(tr.s) {
			return
		}
	}
}
