package device

import (
	"errors"

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
	pending int // callbacks not yet run
	free    []backend.Event
	owned   map[any]func() error
	note    func(error) // the device's sticky-fault check
	waits   []eventWait // AfterEvent callbacks, in registration order
	capture captures    // open stream captures (capture.go)
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

// maxMarks is how many watermarks a stream may have in flight (see poll).
const maxMarks = 2

type track struct {
	open  []func(error) // registered since the last watermark
	marks []mark        // recorded watermarks, oldest first
}

type mark struct {
	ev   backend.Event
	done []func(error)
}

func newTracker(dev backend.Device, note func(error)) *Tracker {
	return &Tracker{dev: dev, streams: map[backend.Stream]*track{}, owned: map[any]func() error{}, note: note}
}

// After runs done on the actor thread once the GPU has passed all work enqueued on s so far:
// with nil, or with the error that stopped the device.
func (t *Tracker) After(s backend.Stream, done func(error)) {
	if t.Capturing(s) { // captured, not run: complete now (capture.go)
		done(nil)
		return
	}
	tr := t.streams[s]
	if tr == nil {
		tr = &track{}
		t.streams[s] = tr
	}
	tr.open = append(tr.open, done)
	t.pending++
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
			t.release(m.ev)
		}
		t.finish(tr.open, err)
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
	if t.pending == 0 || t.pollPaused() { // no polling during a strict capture (capture.go)
		return false
	}
	if len(t.waits) > 0 {
		t.pollEvents()
	}
	for s, tr := range t.streams {
		// At most maxMarks watermarks in flight: later work waits behind them in open, so that
		// when the GPU runs ahead one poll completes many operations instead of one each.
		if len(tr.open) > 0 && len(tr.marks) < maxMarks {
			if err := t.watermark(s, tr); err != nil {
				t.finish(tr.open, err)
				tr.open = nil
			}
		}
		for len(tr.marks) > 0 {
			m := tr.marks[0]
			err := t.dev.EventQuery(m.ev)
			if errors.Is(err, cudaerr.NotReady) {
				break
			}
			t.finish(m.done, err)
			t.release(m.ev)
			tr.marks[0] = mark{}
			tr.marks = tr.marks[1:]
		}
		if len(tr.open) == 0 && len(tr.marks) == 0 {
			delete(t.streams, s)
		}
	}
	return t.pending > 0
}

func (t *Tracker) watermark(s backend.Stream, tr *track) error {
	var ev backend.Event
	if n := len(t.free); n > 0 {
		ev, t.free = t.free[n-1], t.free[:n-1]
	} else {
		var err error
		if ev, err = t.dev.EventCreate(backend.EventDisableTiming); err != nil {
			return err
		}
	}
	if err := t.dev.EventRecord(ev, s); err != nil {
		t.release(ev)
		return err
	}
	tr.marks = append(tr.marks, mark{ev: ev, done: tr.open})
	tr.open = nil
	return nil
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

func (t *Tracker) release(ev backend.Event) { t.free = append(t.free, ev) }

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
	for _, ev := range t.free {
		errs = append(errs, t.dev.EventDestroy(ev))
	}
	t.free = nil
	return errors.Join(errs...)
}
