package sim

import (
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// task is one piece of work queued on a stream.
type task struct {
	name   string      // what it is, for fault messages
	waits  []waitPoint // work on other streams that must finish first
	run    func()      // nil: the task only waits
	always bool        // run even on a faulted device (event records: they only read the clock)
}

// waitPoint is "the first seq tasks of stream s have finished".
type waitPoint struct {
	s   *stream
	seq uint64
}

// stream is an in-order queue. A goroutine runs its tasks while there are any and exits when
// the queue is empty; the next submit starts a new one. So an idle or destroyed stream holds
// no goroutine.
type stream struct {
	h        backend.Stream
	dev      *device
	flags    uint32
	priority int         // guarded by mu once the stream exists
	attrs    streamAttrs // cudaStreamSetAttribute's values (streamattr.go), guarded by mu

	mu        sync.Mutex
	cond      sync.Cond // signalled when done grows
	queue     []*task   // queue[head:] are waiting to run
	head      int
	running   bool   // a goroutine is draining the queue
	enq, done uint64 // tasks submitted, tasks finished
	destroyed bool
}

func newStream(d *device, h backend.Stream, flags uint32, priority int) *stream {
	s := &stream{h: h, dev: d, flags: flags, priority: priority}
	s.cond.L = &s.mu
	return s
}

// push queues t and returns its sequence number (1-based).
func (s *stream) push(t *task) uint64 {
	s.mu.Lock()
	if s.head > 0 && s.head*2 >= len(s.queue) { // compact, so a never-idle stream stays small
		n := copy(s.queue, s.queue[s.head:])
		clear(s.queue[n:])
		s.queue = s.queue[:n]
		s.head = 0
	}
	s.queue = append(s.queue, t)
	s.enq++
	seq := s.enq
	start := !s.running
	s.running = true
	s.mu.Unlock()
	if start {
		go s.drain()
	}
	return seq
}

// drain runs the queue until it is empty.
func (s *stream) drain() {
	s.mu.Lock()
	for s.head < len(s.queue) {
		t := s.queue[s.head]
		s.queue[s.head] = nil
		s.head++
		s.mu.Unlock()
		s.exec(t)
		s.mu.Lock()
		s.done++
		s.cond.Broadcast()
		s.dev.pendDone() // under s.mu: once the device is idle, every stream reports idle
	}
	if cap(s.queue) > 1024 {
		s.queue = nil
	} else {
		s.queue = s.queue[:0]
	}
	s.head = 0
	s.running = false
	gone := s.destroyed
	s.mu.Unlock()
	if gone {
		s.dev.forgetBlocking(s)
	}
}

// exec runs one task on the stream's goroutine.
func (s *stream) exec(t *task) {
	for _, w := range t.waits {
		if s.dev.fault.Load() != nil {
			break // a faulted device runs nothing more: no need to wait for anything
		}
		w.s.wait(w.seq)
	}
	s.dev.beforeOp(t.name)
	if t.run == nil || (!t.always && s.dev.fault.Load() != nil) {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			s.dev.setFault(cudaerr.LaunchFailure, fmt.Sprintf("%s on stream %#x panicked: %v", t.name, uintptr(s.h), r),
				zap.ByteString("stack", debug.Stack()))
		}
	}()
	if f := s.dev.slowdown; f > 1 {
		start := time.Now()
		t.run()
		time.Sleep(time.Duration(float64(time.Since(start)) * (f - 1)))
		return
	}
	t.run()
}

// wait blocks until the first seq tasks have finished.
func (s *stream) wait(seq uint64) {
	s.mu.Lock()
	for s.done < seq {
		s.cond.Wait()
	}
	s.mu.Unlock()
}

// tail is the sequence number of the last task submitted, whether the stream has unfinished
// work, and whether it was destroyed.
func (s *stream) tail() (seq uint64, busy, destroyed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.enq, s.enq > s.done, s.destroyed
}

// submit queues t on s (a stream of d) with the legacy default stream's implicit
// synchronization, and returns its sequence number.
func (d *device) submit(s *stream, t *task) uint64 {
	if d.captured(s, t) {
		return 0 // captured into a graph (capture.go): nothing to wait for
	}
	if s == d.null {
		d.strMu.Lock()
		for b := range d.blocking { // the null stream waits for all blocking streams
			if seq, busy, destroyed := b.tail(); busy {
				t.waits = append(t.waits, waitPoint{b, seq})
			} else if destroyed {
				delete(d.blocking, b)
			}
		}
		d.strMu.Unlock()
	} else if s.flags&backend.StreamNonBlocking == 0 { // blocking streams wait for the null stream
		if seq, busy, _ := d.null.tail(); busy {
			t.waits = append(t.waits, waitPoint{d.null, seq})
		}
	}
	d.pendAdd()
	return s.push(t)
}

func (d *device) forgetBlocking(s *stream) {
	d.strMu.Lock()
	delete(d.blocking, s)
	d.strMu.Unlock()
}

// stream looks up a live stream handle of any device; 0 is d's legacy default stream.
func (d *device) stream(op string, h backend.Stream) (*stream, error) {
	if h == 0 {
		return d.null, nil
	}
	d.b.mu.RLock()
	s := d.b.streams[h]
	d.b.mu.RUnlock()
	if s == nil {
		return nil, d.fail(op, cudaerr.InvalidResourceHandle, "stream %#x is not a live stream (destroyed, or never created)", uintptr(h))
	}
	return s, nil
}

// ownStream looks up a live stream of d: work can only be queued on the device's own streams.
func (d *device) ownStream(op string, h backend.Stream) (*stream, error) {
	s, err := d.stream(op, h)
	if err != nil {
		return nil, err
	}
	if s.dev != d {
		return nil, d.fail(op, cudaerr.InvalidResourceHandle, "stream %#x belongs to device %d, not device %d",
			uintptr(h), s.dev.ordinal, d.ordinal)
	}
	return s, nil
}

// StreamCreate creates a stream; the priority is clamped to StreamPriorityRange, as CUDA does.
func (d *device) StreamCreate(flags uint32, priority int) (backend.Stream, error) {
	const op = "cudaStreamCreateWithPriority"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	if flags&^backend.StreamNonBlocking != 0 {
		return 0, d.fail(op, cudaerr.InvalidValue, "unknown stream flags %#x", flags)
	}
	priority = min(max(priority, greatestPriority), leastPriority)
	s := newStream(d, backend.Stream(d.b.nextHandle()), flags, priority)
	d.b.mu.Lock()
	d.b.streams[s.h] = s
	d.b.mu.Unlock()
	if flags&backend.StreamNonBlocking == 0 {
		d.strMu.Lock()
		d.blocking[s] = struct{}{}
		d.strMu.Unlock()
	}
	return s.h, nil
}

// StreamDestroy destroys a stream. Work already queued still runs; the handle is invalid at
// once.
func (d *device) StreamDestroy(h backend.Stream) error {
	const op = "cudaStreamDestroy"
	if err := d.alive(op); err != nil {
		return err
	}
	if h == 0 {
		return d.fail(op, cudaerr.InvalidResourceHandle, "the legacy default stream (0) cannot be destroyed")
	}
	d.b.mu.Lock()
	s := d.b.streams[h]
	delete(d.b.streams, h)
	d.b.mu.Unlock()
	if s == nil {
		return d.fail(op, cudaerr.InvalidResourceHandle, "stream %#x is not a live stream (destroyed, or never created)", uintptr(h))
	}
	s.mu.Lock()
	s.destroyed = true
	idle := !s.running
	s.mu.Unlock()
	if idle {
		s.dev.forgetBlocking(s)
	}
	return nil
}

// StreamSynchronize waits until all work queued on s so far has finished.
func (d *device) StreamSynchronize(h backend.Stream) error {
	const op = "cudaStreamSynchronize"
	if err := d.alive(op); err != nil {
		return err
	}
	s, err := d.stream(op, h)
	if err != nil {
		return err
	}
	if err := d.captureForbids(op, s); err != nil {
		return err
	}
	seq, _, _ := s.tail()
	s.wait(seq)
	d.alloc.releaseAtSync(s, seq)
	if err := d.alive(op); err != nil {
		return err
	}
	return s.dev.alive(op)
}

// StreamQuery is nil when s is idle, cudaerr.NotReady while work is pending.
func (d *device) StreamQuery(h backend.Stream) error {
	const op = "cudaStreamQuery"
	if err := d.alive(op); err != nil {
		return err
	}
	s, err := d.stream(op, h)
	if err != nil {
		return err
	}
	if err := d.captureForbids(op, s); err != nil {
		return err
	}
	_, busy, _ := s.tail()
	if err := s.dev.alive(op); err != nil { // after the tail: a fault as the work ends is seen
		return err
	}
	if busy {
		return newError(op, cudaerr.NotReady, "") // not an error: not recorded as the last error
	}
	return nil
}

// StreamWaitEvent makes work queued on s from now on wait for e's most recent record (made on
// any device). An event never recorded imposes no wait.
func (d *device) StreamWaitEvent(h backend.Stream, e backend.Event) error {
	const op = "cudaStreamWaitEvent"
	if err := d.alive(op); err != nil {
		return err
	}
	s, err := d.ownStream(op, h)
	if err != nil {
		return err
	}
	ev, err := d.event(op, e)
	if err != nil {
		return err
	}
	if captured, err := d.captureWait(s, ev); captured {
		return err
	}
	rec := ev.current()
	if rec == nil || rec.complete() {
		return nil // nothing to wait for: work already queued on s keeps its order anyway
	}
	d.submit(s, &task{name: "event wait", waits: []waitPoint{{rec.s, rec.seq}}})
	return nil
}

// LaunchHostFunc runs fn on the stream's goroutine once s reaches it. A panic in fn is
// recovered and logged (WithLogger) and the stream goes on: a host function has no way to
// report an error to the runtime. As with cudaLaunchHostFunc, fn is not called once the
// device has faulted.
func (d *device) LaunchHostFunc(h backend.Stream, fn func()) error {
	const op = "cudaLaunchHostFunc"
	if err := d.alive(op); err != nil {
		return err
	}
	s, err := d.ownStream(op, h)
	if err != nil {
		return err
	}
	if fn == nil {
		return d.fail(op, cudaerr.InvalidValue, "nil host function")
	}
	d.submit(s, &task{name: "host function", run: func() {
		defer func() {
			if r := recover(); r != nil {
				d.log.Error("sim: host function panicked; recovered, the stream goes on",
					zap.Uintptr("stream", uintptr(h)), zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
			}
		}()
		fn()
	}})
	return nil
}

// event is a cudaEvent_t.
type event struct {
	h     backend.Event
	dev   *device
	flags uint32

	mu  sync.Mutex
	rec *record // most recent record, nil if never recorded
}

// record is one EventRecord: the position seq on stream s.
type record struct {
	s   *stream
	seq uint64
	at  time.Time // when the stream reached the record; written before the task counts as done
}

func (e *event) current() *record {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.rec
}

// complete reports whether the stream has reached the record.
func (r *record) complete() bool {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return r.s.done >= r.seq
}

// event looks up a live event of any device.
func (d *device) event(op string, h backend.Event) (*event, error) {
	d.b.mu.RLock()
	e := d.b.events[h]
	d.b.mu.RUnlock()
	if e == nil {
		return nil, d.fail(op, cudaerr.InvalidResourceHandle, "event %#x is not a live event (destroyed, or never created)", uintptr(h))
	}
	return e, nil
}

// EventCreate creates an event (flags: backend.Event*).
func (d *device) EventCreate(flags uint32) (backend.Event, error) {
	const op = "cudaEventCreateWithFlags"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	if flags&^(backend.EventBlockingSync|backend.EventDisableTiming|backend.EventInterprocess) != 0 {
		return 0, d.fail(op, cudaerr.InvalidValue, "unknown event flags %#x", flags)
	}
	if flags&backend.EventInterprocess != 0 && flags&backend.EventDisableTiming == 0 {
		return 0, d.fail(op, cudaerr.InvalidValue, "an interprocess event must also disable timing")
	}
	e := &event{h: backend.Event(d.b.nextHandle()), dev: d, flags: flags}
	d.b.mu.Lock()
	d.b.events[e.h] = e
	d.b.mu.Unlock()
	return e.h, nil
}

// EventRecord records e at the current end of s; event and stream must be of this device.
func (d *device) EventRecord(h backend.Event, sh backend.Stream) error {
	const op = "cudaEventRecord"
	if err := d.alive(op); err != nil {
		return err
	}
	e, err := d.event(op, h)
	if err != nil {
		return err
	}
	s, err := d.ownStream(op, sh)
	if err != nil {
		return err
	}
	if e.dev != d {
		return d.fail(op, cudaerr.InvalidResourceHandle, "event %#x belongs to device %d, stream %#x to device %d",
			uintptr(h), e.dev.ordinal, uintptr(sh), d.ordinal)
	}
	if d.captureRecord(e, s) {
		return nil
	}
	rec := &record{s: s}
	rec.seq = d.submit(s, &task{name: "event record", always: true, run: func() { rec.at = time.Now() }})
	e.mu.Lock()
	e.rec = rec
	e.mu.Unlock()
	return nil
}

// lastRecord is event h's most recent record: nil (and no error) when it was never recorded.
func (d *device) lastRecord(op string, h backend.Event) (*record, error) {
	if err := d.alive(op); err != nil {
		return nil, err
	}
	e, err := d.event(op, h)
	if err != nil {
		return nil, err
	}
	return e.current(), nil
}

// EventQuery is nil when e's most recent record has completed (or e was never recorded),
// cudaerr.NotReady otherwise.
func (d *device) EventQuery(h backend.Event) error {
	const op = "cudaEventQuery"
	rec, err := d.lastRecord(op, h)
	if rec == nil || err != nil {
		return err
	}
	if !rec.complete() {
		if err := rec.s.dev.alive(op); err != nil {
			return err
		}
		return errEventNotReady // not an error: not recorded as the last error
	}
	// Only after completion: a fault that lands while the record completes is seen, as the
	// work that faulted completes its record too.
	return rec.s.dev.alive(op)
}

// errEventNotReady is EventQuery's answer for a record not reached yet: made once, like the
// cuda backend's, because the Tracker asks it over and over.
var errEventNotReady = newError("cudaEventQuery", cudaerr.NotReady, "")

// EventSynchronize waits for e's most recent record.
func (d *device) EventSynchronize(h backend.Event) error {
	const op = "cudaEventSynchronize"
	rec, err := d.lastRecord(op, h)
	if rec == nil || err != nil {
		return err
	}
	rec.s.wait(rec.seq)
	d.alloc.releaseAtSync(rec.s, rec.seq)
	if err := d.alive(op); err != nil {
		return err
	}
	return rec.s.dev.alive(op)
}

// EventElapsed is the time in milliseconds from start's record to end's. Either event never
// recorded or created with EventDisableTiming: cudaerr.InvalidResourceHandle; either record
// not complete: cudaerr.NotReady.
func (d *device) EventElapsed(start, end backend.Event) (float32, error) {
	const op = "cudaEventElapsedTime"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	var recs [2]*record
	for i, h := range []backend.Event{start, end} {
		e, err := d.event(op, h)
		if err != nil {
			return 0, err
		}
		if e.flags&backend.EventDisableTiming != 0 {
			return 0, d.fail(op, cudaerr.InvalidResourceHandle, "event %#x was created with EventDisableTiming", uintptr(h))
		}
		if recs[i] = e.current(); recs[i] == nil {
			return 0, d.fail(op, cudaerr.InvalidResourceHandle, "event %#x was never recorded", uintptr(h))
		}
	}
	for _, r := range recs {
		if err := r.s.dev.alive(op); err != nil {
			return 0, err
		}
		if !r.complete() {
			return 0, newError(op, cudaerr.NotReady, "") // not recorded as the last error
		}
	}
	return float32(recs[1].at.Sub(recs[0].at).Seconds() * 1e3), nil
}

// EventDestroy destroys an event; a record still pending completes unobserved.
func (d *device) EventDestroy(h backend.Event) error {
	const op = "cudaEventDestroy"
	if err := d.alive(op); err != nil {
		return err
	}
	d.b.mu.Lock()
	e := d.b.events[h]
	delete(d.b.events, h)
	d.b.mu.Unlock()
	if e == nil {
		return d.fail(op, cudaerr.InvalidResourceHandle, "event %#x is not a live event (destroyed, or never created)", uintptr(h))
	}
	return nil
}
