package core

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Tracker completes work when the GPU reaches it, without a host callback per op. Ops register
// a callback with After. Between messages, the device's actor records events (watermarks) on
// the streams that got new callbacks and asks each stream's oldest watermark, running every
// callback a completed one covers; under load many ops share a watermark (see markGap). It
// also owns cleanups of public packages' resources, run when the device closes. Actor thread
// only: ops reach it through Run and Submit.
type Tracker struct {
	dev     backend.Device
	streams map[backend.Stream]*track // every stream that had work, until Settle: tracks are reused
	active  []*track                  // the tracks with work, for poll to walk
	pending int                       // callbacks not yet run
	adds    uint64                    // callbacks registered so far, and as poll last saw them:
	seen    uint64                    // the difference says whether callers are queuing work
	free    []backend.Event
	spare   [][]completion // emptied callback lists, reused for the next ones
	lastNow time.Duration  // the actor's clock at the last poll
	owned   map[any]func() error
	// note is the device's sticky-fault check, which returns the error to hand on; culprit
	// names the launch the error followed on its stream, "" when unknown.
	note    func(err error, culprit string) error
	waits   []eventWait                 // AfterEvent callbacks, in registration order
	capture captures                    // open stream captures (capture.go)
	freed   map[backend.Stream]struct{} // streams with a stream-ordered free since Synchronize last saw them

	// The stream After saw last and its track: ops come in runs on one stream, and this
	// saves a map lookup per op. Cleared when the track is dropped (Settle).
	lastS backend.Stream
	lastT *track

	markGap, queryGap time.Duration // the pacing constants below; tests change them

	counts *trackerCounts // the device's, read lock-free by Device.TrackerStats

	// probe: operations' waiters may ask their watermarks themselves (waiterquery.go); held
	// are passed watermarks a waiter was asking when the tracker went to recycle the event.
	probe bool
	held  []*wmark

	// walks counts the walks over tracks in progress (poll, Settle, Retire, fail, close), whose
	// callbacks may reach Drained: it settles no track while one runs.
	walks int
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
		if notReady(err) {
			kept = append(kept, w)
			continue
		}
		err = t.note(err, "")
		t.counts.completed.add(1)
		w.done(err)
		t.pending--
	}
	clear(t.waits[len(kept):])
	t.waits = kept
}

// Watermark pacing: the per-operation cost of futures. Recording and asking an event costs
// the actor a tenth to a third of the launch it tracks, and waiting on fine-grained events
// slows the stream itself, so operations share watermarks: a stream with watermarks in flight
// gets a new one only once markOps operations wait for it or markGap has passed (per stream
// with work tracked, up to maxGapScale of them, since the streams share the actor's launches).
// While the actor has messages waiting (hurry) or callers have queued work since the last
// poll, a stream's oldest watermark is asked at most every queryGap, so that a caller keeping
// a window of futures does not pay a query per operation; an actor with nothing new to do asks
// at every poll, and a stream with no watermark in flight gets one at once, so a lone operation
// completes as soon as the GPU reaches it. An operation that frees a resource a caller waits
// for asks for a watermark of its own (AfterMarked). The measurements behind these numbers are
// in docs/design/tracker.md.
const (
	markOps  = 16
	markGap  = 200 * time.Microsecond
	queryGap = 5 * time.Microsecond
	// maxGapScale bounds how far markGap stretches with the number of streams tracked.
	maxGapScale = 8
	// maxMarks is how many watermarks a stream may have in flight; later work waits for one.
	maxMarks = 16
	// longAgo is the last watermark and query of a stream new to the tracker.
	longAgo = time.Duration(-1 << 62)
)

type track struct {
	s         backend.Stream
	idx       int           // in Tracker.active; -1 while the stream has no work
	open      []completion  // registered since the last watermark
	marks     []mark        // recorded watermarks, oldest first from marks[first]
	first     int           // marks before it have passed; the slice is reused, not regrown
	urgent    bool          // an operation in open asked for a watermark of its own
	lastMark  time.Duration // when the last watermark was recorded (the actor's clock)
	lastQuery time.Duration // when the oldest watermark was last asked
	retired   bool          // its stream was destroyed: only its watermarks in flight remain
	kernel    string        // the last kernel launched on the stream (Launched)
	next      *wmark        // the watermark-to-be of open, that waiters may probe; nil if none asked
}

type mark struct {
	ev     backend.Event
	done   []completion
	at     time.Duration // when it was recorded (the watchdog's clock)
	kernel string        // the last kernel launched on the stream before it; "" for none
	wm     *wmark        // its waiters' view (waiterquery.go); nil when none may probe it
}

// completion is a callback of After, or the promise of AfterPromise: completing a promise
// directly saves the closure that would complete it.
//
// user, when set, is the future of the operation fn completes: Abort fails it early, and fn
// still runs when the GPU passes.
type completion struct {
	fn   func(error)
	p    *actor.Promise[struct{}]
	user *actor.Promise[struct{}]
}

func (c completion) run(err error) {
	if c.p != nil {
		c.p.Complete(struct{}{}, err)
		return
	}
	c.fn(err)
}

// notReady reports whether err is cudaErrorNotReady: a watermark the GPU has not passed. Most
// queries say so; the type check spares errors.Is, whose unwrapping to a Code allocates.
func notReady(err error) bool {
	if e, ok := err.(*cudaerr.Error); ok {
		return e.Code == cudaerr.NotReady
	}
	return errors.Is(err, cudaerr.NotReady)
}

func newTracker(dev backend.Device, note func(err error, culprit string) error, counts *trackerCounts) *Tracker {
	if counts == nil {
		counts = new(trackerCounts)
	}
	return &Tracker{dev: dev, streams: map[backend.Stream]*track{}, owned: map[any]func() error{}, note: note,
		markGap: markGap, queryGap: queryGap, counts: counts}
}

// After runs done on the actor thread once the GPU has passed all work enqueued on s so far:
// with nil, or with the error that stopped the device.
func (t *Tracker) After(s backend.Stream, done func(error)) { t.add(s, completion{fn: done}) }

// AfterPromise is After that completes p: the way an op's own future is completed when the
// GPU has passed it, without a closure per op.
func (t *Tracker) AfterPromise(s backend.Stream, p *actor.Promise[struct{}]) {
	t.add(s, completion{p: p})
}

func (t *Tracker) add(s backend.Stream, c completion) {
	if t.Capturing(s) { // captured, not run: complete now (capture.go)
		c.run(nil)
		return
	}
	t.addTo(t.trackOf(s), c)
}

// trackOf is s's track, made on first use.
func (t *Tracker) trackOf(s backend.Stream) *track {
	tr := t.lastT
	if tr == nil || t.lastS != s {
		tr = t.streams[s]
		if tr == nil {
			tr = &track{s: s, idx: -1, lastMark: longAgo, lastQuery: longAgo}
			t.streams[s] = tr
		}
		t.lastS, t.lastT = s, tr
	}
	return tr
}

// Launched notes that kernel was launched on s, so that a sticky error the stream reports
// after it names the launch it followed: the runtime reports a kernel's fault at the next
// synchronization, not at its launch. Actor thread only.
func (t *Tracker) Launched(s backend.Stream, kernel string) {
	if !t.Capturing(s) {
		t.trackOf(s).kernel = kernel
	}
}

// addTo registers c on track tr. A retired track's stream is gone and its work done up to its
// last watermark in flight: c completes with that watermark, or at once.
func (t *Tracker) addTo(tr *track, c completion) {
	if tr.retired {
		if n := len(tr.marks); n > tr.first {
			tr.marks[n-1].done = append(tr.marks[n-1].done, c)
			t.pending++
			t.adds++
		} else {
			c.run(nil)
		}
		return
	}
	if tr.idx < 0 {
		tr.idx = len(t.active)
		t.active = append(t.active, tr)
	}
	if tr.open == nil {
		tr.open = t.takeSpare()
	}
	tr.open = append(tr.open, c)
	t.pending++
	t.adds++
}

// AfterMarked is After for an operation that is worth a watermark of its own even when the
// stream is busy: one whose completion frees a resource the caller is waiting for (a staging
// buffer), and whose duration dwarfs a watermark's cost.
func (t *Tracker) AfterMarked(s backend.Stream, done func(error)) {
	t.afterFor(s, nil, done, true)
}

// afterFor is After, or AfterMarked when marked, for done, which completes user: Abort fails
// user early.
func (t *Tracker) afterFor(s backend.Stream, user *actor.Promise[struct{}], done func(error), marked bool) {
	t.add(s, completion{fn: done, user: user})
	if tr := t.streams[s]; marked && tr != nil { // nil when captured: done has run
		tr.urgent = true
	}
}

// abort completes every operation's future still waiting on the GPU with err, at once: for a
// shutdown whose deadline passed. The callbacks themselves still run when the GPU passes their
// work (what they release is released then); the futures they would complete are done already.
func (t *Tracker) abort(err error) {
	fail := func(cs []completion) {
		for _, c := range cs {
			if c.p != nil {
				c.p.Complete(struct{}{}, err)
			}
			if c.user != nil {
				c.user.Complete(struct{}{}, err)
			}
		}
	}
	tracks := slices.Clone(t.active)
	for _, tr := range t.streams {
		tracks = append(tracks, tr)
	}
	for _, tr := range tracks {
		fail(tr.open)
		for _, m := range tr.marks[tr.first:] {
			fail(m.done)
		}
	}
}

// fail completes, at once and with err, every callback still waiting on the GPU and every
// event wait, and forgets their watermarks: for a device the watchdog found stuck, whose GPU
// will pass none of them. Unlike abort, the callbacks themselves run now, so that every
// caller waiting through one (a Synchronize, an event's, a buffer's Close) returns; given err,
// each frees nothing, since freeing would wait for the GPU (the stuck device's release
// abandons what it holds).
func (t *Tracker) fail(err error) {
	t.walks++
	defer func() { t.walks-- }()
	var all []completion
	for _, tr := range slices.Clone(t.active) { // a track holds callbacks only while active
		all = append(all, tr.open...)
		for _, m := range tr.marks[tr.first:] {
			all = append(all, m.done...)
		}
		for _, m := range tr.marks[tr.first:] {
			if m.wm != nil {
				m.wm.retire() // best effort: the events are abandoned with the stuck device
			}
		}
		tr.open, tr.marks, tr.first, tr.urgent, tr.next = nil, nil, 0, false, nil
		t.idle(tr)
	}
	waits := t.waits
	t.waits, t.pending = nil, 0
	t.counts.completed.add(uint64(len(all) + len(waits)))
	for _, c := range all {
		c.run(err)
		if c.user != nil {
			c.user.Complete(struct{}{}, err)
		}
	}
	for _, w := range waits {
		w.done(err)
	}
}

// idle takes tr, which holds no callbacks, out of the tracks poll walks; it stays in streams
// for the stream's next work.
func (t *Tracker) idle(tr *track) {
	if tr.idx < 0 {
		return
	}
	last := len(t.active) - 1
	t.active[tr.idx] = t.active[last]
	t.active[tr.idx].idx = tr.idx
	t.active[last] = nil
	t.active = t.active[:last]
	tr.idx = -1
}

// drop forgets s's track, once it holds no callbacks: before s is destroyed.
func (t *Tracker) drop(s backend.Stream) {
	delete(t.freed, s) // a destroyed stream cannot be synchronized
	tr := t.streams[s]
	if tr == nil {
		return
	}
	t.idle(tr)
	delete(t.streams, s)
	if t.lastS == s {
		t.lastS, t.lastT = 0, nil
	}
}

// takeSpare returns an emptied callback list to fill, or a new one with room for a busy
// stream's watermark's worth (rather than growing one a callback at a time).
func (t *Tracker) takeSpare() []completion {
	n := len(t.spare)
	if n == 0 {
		return make([]completion, 0, markOps)
	}
	l := t.spare[n-1]
	t.spare[n-1] = nil
	t.spare = t.spare[:n-1]
	return l
}

// keepSpare keeps a finished callback list for reuse; a few suffice, one per stream in use.
func (t *Tracker) keepSpare(l []completion) {
	if cap(l) == 0 || cap(l) > 1024 || len(t.spare) >= 64 {
		return
	}
	clear(l)
	t.spare = append(t.spare, l[:0])
}

// Settle waits for s and runs every callback registered on it, with err or, when err is nil,
// whatever synchronizing s returned: before s is destroyed.
func (t *Tracker) Settle(s backend.Stream, err error) error {
	if err == nil {
		err = t.dev.StreamSynchronize(s)
	}
	if tr := t.streams[s]; tr != nil {
		t.walks++
		defer func() { t.walks-- }()
		for _, m := range tr.marks[tr.first:] {
			t.finish(m.done, err)
			t.releaseMark(m)
		}
		t.finish(tr.open, err)
		tr.next = nil
		t.drop(s)
	}
	return err
}

// AfterAll runs done on the actor thread once the GPU has passed all work enqueued so far on
// every stream with work tracked, with the first error any of them ended with: a barrier over
// the device's streams that waits for the GPU without blocking the actor. With no work in
// flight, done runs at once, and so it does when every such stream is found drained
// (Drained).
func (t *Tracker) AfterAll(done func(error)) {
	t.drainActive() // streams whose work has passed need no watermark to say so
	left := len(t.active)
	if left == 0 {
		done(nil)
		return
	}
	var first error
	each := func(err error) {
		if err != nil && first == nil {
			first = err
		}
		if left--; left == 0 {
			done(first)
		}
	}
	for _, tr := range slices.Clone(t.active) {
		if t.Capturing(tr.s) { // captured, not run
			each(nil)
			continue
		}
		t.addTo(tr, completion{fn: each})
	}
}

// Retire forgets destroyed stream s, from one of its own callbacks, run once the GPU had
// passed all its work: callbacks registered after that one complete now, its watermarks in
// flight still complete theirs, and a stream the runtime later gives the same handle gets a
// track of its own. (Dropping the track outright would pull it from under the poll that runs
// the callback.)
func (t *Tracker) Retire(s backend.Stream) {
	delete(t.freed, s) // a destroyed stream cannot be synchronized
	tr := t.streams[s]
	if tr == nil {
		return
	}
	delete(t.streams, s)
	if t.lastS == s {
		t.lastS, t.lastT = 0, nil
	}
	tr.retired = true
	open := tr.open
	tr.open, tr.urgent, tr.next = nil, false, nil
	t.walks++
	t.finish(open, nil)
	t.walks--
}

// Own registers cleanup to run when the device closes, unless Disown(key) ran first.
func (t *Tracker) Own(key any, cleanup func() error) { t.owned[key] = cleanup }

// Disown drops key's cleanup.
func (t *Tracker) Disown(key any) { delete(t.owned, key) }

// poll is the actor's idle hook: record watermarks for new callbacks, run those whose
// watermark the GPU has passed, and report whether any remain. hurry says the actor has
// messages waiting (see markGap); now is the actor's clock, the one every time the tracker
// keeps is read from.
func (t *Tracker) poll(hurry bool, now time.Duration) (busy bool) {
	t.lastNow = now
	if len(t.held) > 0 {
		t.reclaim()
	}
	if t.pending == 0 || t.pollPaused() { // no polling during a strict capture (capture.go)
		return false
	}
	t.counts.polls.add(1)
	t.walks++
	if len(t.waits) > 0 {
		t.pollEvents()
	}
	gap := t.markGap * time.Duration(min(max(len(t.active), 1), maxGapScale))
	// Nothing waiting and nothing queued since the last poll: the actor is idle, so asking
	// costs nothing anyone waits for.
	idle := !hurry && t.adds == t.seen
	t.seen = t.adds
	// Backwards, so that idling a track (which moves the last one into its place) skips none.
	for i := len(t.active) - 1; i >= 0; i-- {
		tr := t.active[i]
		s := tr.s
		if len(t.capture.modes) > 0 && t.Capturing(s) {
			continue // a watermark recorded now would be captured (relaxed captures poll on)
		}
		inFlight := len(tr.marks) - tr.first
		if len(tr.open) > 0 && inFlight < maxMarks &&
			(tr.urgent || len(tr.open) >= markOps || now-tr.lastMark >= gap || (!hurry && inFlight == 0)) &&
			t.watermark(s, tr, now) {
			inFlight++
		}
		if inFlight > 0 && (idle || now-tr.lastQuery >= t.queryGap) {
			tr.lastQuery = now
			t.passed(tr)
			inFlight = len(tr.marks) - tr.first
		}
		if len(tr.open) == 0 && inFlight == 0 {
			t.idle(tr)
		}
	}
	t.walks--
	return t.pending > 0
}

// oldestMark is how long the oldest watermark in flight has waited at now; 0 with none.
func (t *Tracker) oldestMark(now time.Duration) time.Duration {
	var age time.Duration
	for _, tr := range t.active {
		if tr.first < len(tr.marks) {
			age = max(age, now-tr.marks[tr.first].at)
		}
	}
	return age
}

// passed runs the callbacks of the watermarks the GPU has passed.
func (t *Tracker) passed(tr *track) {
	for tr.first < len(tr.marks) {
		m := tr.marks[tr.first]
		t.counts.queries.add(1)
		err := t.dev.EventQuery(m.ev)
		if notReady(err) {
			return
		}
		if err != nil && m.kernel != "" {
			err = t.note(err, fmt.Sprintf("kernel %s launched on stream %#x", m.kernel, uintptr(tr.s)))
		}
		t.finish(m.done, err)
		t.keepSpare(m.done)
		t.releaseMark(m)
		tr.marks[tr.first] = mark{}
		tr.first++
	}
	tr.marks, tr.first = tr.marks[:0], 0
}

// watermark records a watermark for tr's open callbacks and reports whether it did; when the
// runtime refuses, it finishes them with the error instead.
func (t *Tracker) watermark(s backend.Stream, tr *track, now time.Duration) bool {
	var ev backend.Event
	if n := len(t.free); n > 0 {
		ev, t.free = t.free[n-1], t.free[:n-1]
	} else {
		var err error
		if ev, err = t.dev.EventCreate(backend.EventDisableTiming); err != nil {
			t.finishAfter(tr.open, err, tr.culprit(s))
			tr.open, tr.next = nil, nil
			return false
		}
	}
	if err := t.dev.EventRecord(ev, s); err != nil {
		t.release(ev)
		t.finishAfter(tr.open, err, tr.culprit(s))
		tr.open, tr.next = nil, nil
		return false
	}
	wm := tr.next
	if wm != nil {
		wm.recorded(ev) // its operations' waiters may ask it from now on
	}
	t.counts.marks.add(1)
	if tr.first > 0 && len(tr.marks) == cap(tr.marks) { // room at the front: reuse it
		n := copy(tr.marks, tr.marks[tr.first:])
		clear(tr.marks[n:])
		tr.marks, tr.first = tr.marks[:n], 0
	}
	tr.marks = append(tr.marks, mark{ev: ev, done: tr.open, at: now, kernel: tr.kernel, wm: wm})
	tr.open, tr.urgent, tr.lastMark, tr.next = nil, false, now, nil
	return true
}

// culprit names the last kernel launched on stream s, tr's stream, for a sticky error met while
// tracking it; "" when none was.
func (tr *track) culprit(s backend.Stream) string {
	if tr.kernel == "" {
		return ""
	}
	return fmt.Sprintf("kernel %s launched on stream %#x", tr.kernel, uintptr(s))
}

func (t *Tracker) release(ev backend.Event) { t.free = append(t.free, ev) }

func (t *Tracker) finish(done []completion, err error) { t.finishAfter(done, err, "") }

// finishAfter is finish for an error met while tracking a stream whose last launch culprit
// names ("" for none): a kernel's fault can surface at the tracker's own calls first.
func (t *Tracker) finishAfter(done []completion, err error, culprit string) {
	err = t.note(err, culprit)
	t.counts.completed.add(uint64(len(done))) // before the callbacks: a caller woken by one sees it counted
	for _, c := range done {
		c.run(err)
	}
	t.pending -= len(done)
}

// close settles every stream, runs the owned cleanups and destroys the event pool: when the
// device closes, on the actor thread.
func (t *Tracker) close() error {
	t.walks++
	defer func() { t.walks-- }()
	var errs []error
	for s, tr := range t.streams {
		if tr.idx < 0 { // no work: nothing to wait for
			t.drop(s)
			continue
		}
		if err := t.Settle(s, nil); err != nil {
			errs = append(errs, err)
		}
	}
	for _, tr := range slices.Clone(t.active) { // destroyed streams' watermarks: their work is done
		for _, m := range tr.marks[tr.first:] {
			t.finish(m.done, nil)
			t.releaseMark(m)
		}
		tr.marks, tr.first = nil, 0
		t.idle(tr)
	}
	for len(t.waits) > 0 { // every stream is idle now, so every recorded event has completed
		t.pollEvents()
	}
	for key, cleanup := range t.owned {
		errs = append(errs, cleanup())
		delete(t.owned, key)
	}
	t.drainHeld() // no waiter asks an event once it is destroyed
	for _, ev := range t.free {
		errs = append(errs, t.dev.EventDestroy(ev))
	}
	t.free = nil
	return errors.Join(errs...)
}

// TrackerStats counts the completion tracking's work since the device opened: how many times
// it polled, watermarks it recorded and asked about, and callbacks it ran.
//
// WaiterQueries and WaiterCompleted count the queries waiters made of their operations'
// watermarks themselves, and the futures they completed before the tracker did
// (ActorTuning.WaiterQuery); the tracker's Completed counts those too.
type TrackerStats struct {
	Polls, Watermarks, Queries, Completed uint64
	WaiterQueries, WaiterCompleted        uint64
}

// trackerCounts are the tracker's counters. Only the actor writes them; any goroutine reads
// them, so that Device.Stats needs no round trip to the actor.
type trackerCounts struct {
	polls, marks, queries, completed ownedCounter
	// Written by waiters, any number at once, as often as every query they make: on a cache
	// line of their own, so that the actor's counters above do not bounce with them.
	_                         [64]byte
	waiterQueries, waiterDone atomic.Uint64
	_                         [48]byte
}

func (c *trackerCounts) snapshot() TrackerStats {
	return TrackerStats{Polls: c.polls.load(), Watermarks: c.marks.load(), Queries: c.queries.load(),
		Completed: c.completed.load(), WaiterQueries: c.waiterQueries.Load(), WaiterCompleted: c.waiterDone.Load()}
}

// ownedCounter is a counter with one writer and any number of readers: the writer's add is a
// load and a store, not a locked read-modify-write, since no other goroutine adds.
type ownedCounter struct{ v atomic.Uint64 }

func (c *ownedCounter) add(n uint64) { c.v.Store(c.v.Load() + n) }
func (c *ownedCounter) load() uint64 { return c.v.Load() }
