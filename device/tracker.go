package device

import (
	"errors"
	"time"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Tracker completes work when the GPU reaches it, without a host callback per op. Ops register
// a callback with After. After each batch of messages, the device's actor records one event
// (a watermark) on every stream that got new callbacks, and between messages it polls each
// stream's oldest watermark, running every callback a completed one covers. Under load many
// ops share a watermark; an idle device notices completions within its spin or idle-poll
// window. It also owns cleanups of domain packages' resources, run when the device closes.
// Actor thread only: ops reach it through Exec.
type Tracker struct {
	dev     backend.Device
	streams map[backend.Stream]*track
	pending int    // callbacks not yet run
	marks   marker // how watermarks are made and checked (marks.go)
	epoch   time.Time
	owned   map[any]func() error
	note    func(error) // the device's sticky-fault check
	waits   []eventWait // AfterEvent callbacks, in registration order
}

type eventWait struct {
	ev   backend.Event
	done func(error)
}

// AfterEvent runs done on the actor thread once ev's most recent record has completed (at
// once, from the next poll, when ev was never recorded).
func (t *Tracker) AfterEvent(ev backend.Event, done func(error)) {
	t.waits = append(t.waits, eventWait{ev, done})
	t.pending++
}

// pollEvents runs the event waits whose events have completed.
func (t *Tracker) pollEvents() {
	kept := t.waits[:0]
	for _, w := range t.waits {
		err := t.dev.EventQuery(w.ev)
		if errors.Is(err, cudaerr.NotReady) {
			kept = append(kept, w)
			continue
		}
		t.finish([]func(error){w.done}, err)
	}
	clear(t.waits[len(kept):])
	t.waits = kept
}

// Watermark pacing. An idle stream gets its watermark at once, so a lone operation
// completes as soon as the GPU reaches it. While a stream already has watermarks in flight,
// new work waits up to markGap for one of its own (or until the GPU passes the others), so
// that a stream of short operations shares watermarks instead of paying an enqueue for each.
// Memory watermarks cannot report a fault, so a stream whose watermarks have not moved for
// faultCheck is asked for its error.
const (
	markGap    = 20 * time.Microsecond
	faultCheck = time.Millisecond
)

type track struct {
	open     []func(error) // registered since the last watermark
	marks    []mark        // recorded watermarks, oldest first
	urgent   bool          // an operation in open asked for a watermark of its own
	slot     *markSlot     // memory watermarks: the stream's slot
	lastMark time.Duration // when the last watermark was recorded (Tracker.now)
	checked  time.Duration // when the watermarks last moved or the stream was last asked for errors
}

func newTracker(dev backend.Device, note func(error), probe backend.Stream) *Tracker {
	t := &Tracker{dev: dev, streams: map[backend.Stream]*track{}, owned: map[any]func() error{}, note: note, epoch: time.Now()}
	if m := newMemMarks(dev, probe); m != nil {
		t.marks = m
	} else {
		t.marks = &eventMarks{dev: dev}
	}
	return t
}

// now is the time since the tracker was made (monotonic).
func (t *Tracker) now() time.Duration { return time.Since(t.epoch) }

// After runs done on the actor thread once the GPU has passed all work enqueued on s so far:
// with nil, or with the error that stopped the device.
func (t *Tracker) After(s backend.Stream, done func(error)) {
	tr := t.streams[s]
	if tr == nil {
		tr = &track{lastMark: -markGap}
		t.streams[s] = tr
	}
	tr.open = append(tr.open, done)
	t.pending++
}

// AfterMarked is After for an operation that is worth a watermark of its own even when the
// stream is busy: one whose completion frees a resource the caller is waiting for (a staging
// buffer), and whose duration dwarfs a watermark's cost.
func (t *Tracker) AfterMarked(s backend.Stream, done func(error)) {
	t.After(s, done)
	t.streams[s].urgent = true
}

// Settle waits for s and runs every callback registered on it, with err or, when err is nil,
// whatever synchronizing s returned: before s is destroyed.
func (t *Tracker) Settle(s backend.Stream, err error) error {
	if err == nil {
		err = t.dev.StreamSynchronize(s)
	}
	if tr := t.streams[s]; tr != nil {
		for _, m := range tr.marks {
			t.finish(m.done, err)
			t.marks.done(m)
		}
		t.finish(tr.open, err)
		t.marks.forget(tr)
		delete(t.streams, s)
	}
	return err
}

// Own registers cleanup to run when the device closes, unless Disown(key) ran first.
func (t *Tracker) Own(key any, cleanup func() error) { t.owned[key] = cleanup }

// Disown drops key's cleanup.
func (t *Tracker) Disown(key any) { delete(t.owned, key) }

// poll is the actor's idle hook: record watermarks for new callbacks, run those whose
// watermark the GPU has passed, and report whether any remain.
func (t *Tracker) poll() (busy bool) {
	if t.pending == 0 {
		return false
	}
	if len(t.waits) > 0 {
		t.pollEvents()
	}
	now := t.now()
	for s, tr := range t.streams {
		if len(tr.open) > 0 && len(tr.marks) < t.marks.limit() &&
			(len(tr.marks) == 0 || tr.urgent || now-tr.lastMark >= markGap) {
			t.watermark(s, tr, now)
		}
		moved := t.passed(tr)
		if len(tr.marks) > 0 && t.marks.cheap() {
			if moved {
				tr.checked = now
			} else if now-tr.checked >= faultCheck {
				tr.checked = now
				t.checkFault(s, tr)
			}
		}
		if len(tr.open) == 0 && len(tr.marks) == 0 {
			t.marks.forget(tr)
			delete(t.streams, s)
		}
	}
	return t.pending > 0
}

// passed runs the callbacks of the watermarks the GPU has passed, and reports whether any.
func (t *Tracker) passed(tr *track) bool {
	moved := false
	for len(tr.marks) > 0 {
		m := tr.marks[0]
		ok, err := t.marks.reached(tr, m)
		if !ok {
			break
		}
		t.finish(m.done, err)
		t.marks.done(m)
		tr.marks[0] = mark{}
		tr.marks = tr.marks[1:]
		moved = true
	}
	return moved
}

// checkFault asks a stream whose memory watermarks have stalled whether it failed: a fault
// stops the GPU before it writes them. An error completes everything the stream has pending.
func (t *Tracker) checkFault(s backend.Stream, tr *track) {
	err := t.dev.StreamQuery(s)
	if err == nil || errors.Is(err, cudaerr.NotReady) {
		return
	}
	for _, m := range tr.marks {
		t.finish(m.done, err)
		t.marks.done(m)
	}
	tr.marks = nil
	t.finish(tr.open, err)
	tr.open = nil
}

func (t *Tracker) watermark(s backend.Stream, tr *track, now time.Duration) {
	m, err := t.marks.record(s, tr)
	if err != nil {
		t.finish(tr.open, err)
		tr.open = nil
		return
	}
	if len(tr.marks) == 0 {
		tr.checked = now
	}
	m.done = tr.open
	tr.marks = append(tr.marks, m)
	tr.open, tr.urgent, tr.lastMark = nil, false, now
}

func (t *Tracker) finish(done []func(error), err error) {
	if err != nil {
		t.note(err)
	}
	for _, f := range done {
		f(err)
	}
	t.pending -= len(done)
}

// close settles every stream, runs the owned cleanups and destroys the event pool: when the
// device closes, on the actor thread.
func (t *Tracker) close() error {
	var errs []error
	for s := range t.streams {
		if err := t.Settle(s, nil); err != nil {
			errs = append(errs, err)
		}
	}
	for len(t.waits) > 0 { // every stream is idle now, so every recorded event has completed
		t.pollEvents()
	}
	for key, cleanup := range t.owned {
		errs = append(errs, cleanup())
		delete(t.owned, key)
	}
	errs = append(errs, t.marks.close())
	return errors.Join(errs...)
}
