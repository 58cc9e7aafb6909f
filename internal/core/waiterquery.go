package core

import (
	"runtime"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Waiter-side completion (docs/design/waiter-completion.md): a caller spinning in Await on a
// stream operation's future asks CUDA itself whether the GPU has passed the watermark that
// covers the operation, from its own thread, and completes the future when it has, racing the
// tracker, which completes it too when its own query sees the watermark pass (the promise's
// first completer wins; both complete it with nil).
//
// The watermark is recorded after the operation is registered, at the actor's next poll, so
// an operation gets the watermark-to-be of its stream's open callbacks (track.next), which
// says once it has been recorded. Its event is recycled by the tracker once passed: a waiter
// pins the watermark around each query, and the tracker takes the event back only when no
// waiter holds a pin, so that no query ever asks an event recorded again for other work.

// Watermark states (wmark.state): before the record, and after the tracker took the event
// back; between them wmRecorded, or wmRecorded+1 while a waiter's query of it runs.
const (
	wmUnrecorded int32 = 0
	wmRecorded   int32 = 1
	wmRetired    int32 = -1
)

// wmark is a watermark as waiters see it: its event, once recorded, and the pins that keep
// the event from being recycled while a waiter asks it. One per watermark, never reused, so
// that a waiter holding an old one cannot mistake a later record for its own.
//
// One waiter asks a watermark at a time (a pin held is a query in flight), and the first that
// sees it passed says so in passed, so that the other operations' waiters sharing it complete
// without a query of their own: many waiters on one watermark cost the driver one query at a
// time, not one each.
type wmark struct {
	ev     backend.Event // written before state becomes wmRecorded, then read-only
	state  atomic.Int32
	passed atomic.Bool // a waiter's query saw the GPU pass it
}

// recorded publishes ev as the watermark's event; actor thread.
func (w *wmark) recorded(ev backend.Event) {
	w.ev = ev
	w.state.Store(wmRecorded)
}

// pin keeps the event alive for one query; false when it is not recorded yet, retired, or
// another waiter is asking it now.
func (w *wmark) pin() bool { return w.state.CompareAndSwap(wmRecorded, wmRecorded+1) }

func (w *wmark) unpin() { w.state.Add(-1) }

// retire takes the event back for the tracker, unless a waiter holds a pin: true when it did,
// and no waiter will ask the event again. A watermark never recorded has no event to take.
func (w *wmark) retire() bool {
	return w.state.CompareAndSwap(wmRecorded, wmRetired) || w.state.Load() == wmRetired
}

// Probe is the operation's actor.Prober: it asks the operation's watermark, once recorded,
// and completes the future when the GPU has passed it. On any answer but "passed" or "not
// yet" it stops, and the tracker's own query reports the error as it always has (noting a
// sticky fault once, with the launch it followed), so that no error is reported twice or
// lost.
func (m *msgTask) Probe() actor.ProbeResult {
	w := m.wm.Load()
	if w == nil {
		return actor.ProbeWait
	}
	d := m.s.dev
	if w.passed.Load() { // another waiter's query saw it pass
		if m.p.Complete(struct{}{}, nil) {
			d.trackCounts.waiterDone.Add(1)
		}
		return actor.ProbeAsked
	}
	if !w.pin() {
		if w.state.Load() == wmRetired { // the tracker has passed it: the result is on its way
			return actor.ProbeStop
		}
		return actor.ProbeWait
	}
	err := d.anyq.EventQueryAnyThread(w.ev)
	w.unpin()
	d.trackCounts.waiterQueries.Add(1)
	switch {
	case err == nil:
		w.passed.Store(true)
		if m.p.Complete(struct{}{}, nil) {
			d.trackCounts.waiterDone.Add(1)
		}
		return actor.ProbeAsked
	case notReady(err):
		return actor.ProbeAsked
	}
	return actor.ProbeStop
}

// probed reports whether an operation completed as t says may be completed by its waiters:
// one whose future completes when the GPU has passed it, on its own stream, with nothing to
// run on the actor first.
func (t Tracking) probed() bool {
	return !t.Marked && !t.Queued && !t.Reroute && t.Then == nil
}

// afterProbed is AfterPromise for an operation whose waiters may probe its watermark: slot
// gets the watermark that will cover it.
func (t *Tracker) afterProbed(s backend.Stream, p *actor.Promise[struct{}], slot *atomic.Pointer[wmark]) {
	if t.Capturing(s) {
		p.Complete(struct{}{}, nil)
		return
	}
	tr := t.trackOf(s)
	t.addTo(tr, completion{p: p})
	if !t.probe || tr.retired {
		return
	}
	if tr.next == nil {
		tr.next = new(wmark)
	}
	slot.Store(tr.next)
}

// releaseMark gives m's event back to the pool, or, while a waiter holds a pin on it, keeps it
// aside until the next poll finds it free.
func (t *Tracker) releaseMark(m mark) {
	if m.wm != nil && !m.wm.retire() {
		t.held = append(t.held, m.wm)
		return
	}
	t.release(m.ev)
}

// reclaim gives back the events of held watermarks that no waiter pins any more.
func (t *Tracker) reclaim() {
	kept := t.held[:0]
	for _, w := range t.held {
		if w.retire() {
			t.release(w.ev)
		} else {
			kept = append(kept, w)
		}
	}
	clear(t.held[len(kept):])
	t.held = kept
}

// drainHeld waits for the waiters still asking held watermarks, at Close, before the events
// are destroyed: a pin lasts one query.
func (t *Tracker) drainHeld() {
	for len(t.held) > 0 {
		t.reclaim()
		if len(t.held) > 0 {
			runtime.Gosched()
		}
	}
}
