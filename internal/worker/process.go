package worker

import (
	"context"
	"fmt"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"
)

// Process is a running worker as the parent sees it. Its methods are safe for concurrent use.
type Process struct {
	cfg    config
	cmd    *exec.Cmd
	pid    int
	ctl    transport // the control socket: heartbeats, exit, and EOF when the worker dies
	data   transport // calls and replies: the control socket itself, or the rings
	stderr *tailWriter

	nextID    atomic.Uint64
	callParks atomic.Uint64 // calls that blocked for their reply rather than polling it in
	lastPong  atomic.Int64  // unix nanoseconds of the last heartbeat answer
	heard     atomic.Int64  // unix nanoseconds of the last frame from the worker (WithCallTimeout)

	mu      sync.Mutex
	pending map[uint64]chan reply
	failed  error       // once set, why calls fail: a *DiedError, or ErrClosed
	down    atomic.Bool // failed is set: Failed reads it without the lock
	err     error       // what Err reports
	hung    bool
	closing bool
	// closeKill: Close killed the worker after its close timeout, so the end it sees is its
	// own doing, not a death.
	closeKill bool

	exited chan struct{} // closed when the process was reaped
	done   chan struct{} // closed when the process was reaped and every call failed
	// The readers receive under readCtx, which wait cancels once the worker was reaped: a
	// reader then still takes what the worker wrote before it exited (a receive prefers a
	// frame in hand to its context's end), and wait fails the pending calls only after the
	// readers are done, so that a reply sent just before exiting — a sticky fault's answer —
	// reaches its call instead of the worker's death.
	readCtx   context.Context
	stopRead  context.CancelFunc
	readers   sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// reply is what a pending call gets: the response or an error.
type reply struct {
	data []byte
	err  error
}

// exitGrace is how long the parent waits, after the control socket closed under it, for the
// worker to exit on its own before killing it: a worker closes its socket only by exiting.
const exitGrace = 200 * time.Millisecond

// Pid is the worker's process id.
func (p *Process) Pid() int { return p.pid }

// Done is closed once the worker process has ended and been reaped, for any reason, and every
// pending call has failed.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is nil while the worker runs, and a *DiedError (matching ErrWorkerDied, and
// ErrWorkerHung for a hang) once it died or was killed other than by Close. It is set as soon
// as the parent knows, which may be a moment before Done closes.
func (p *Process) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Failed reports whether calls fail now (the worker died, or Close began), without a lock:
// for a caller that reads state the worker shares and must stop trusting it then.
func (p *Process) Failed() bool { return p.down.Load() }

// MaxMessage is the largest request or response, in bytes, a call carries.
func (p *Process) MaxMessage() int { return p.data.maxFrame() - headerSize }

// Call sends req to the worker's handler and waits for its response. It completes when the
// response arrives, when ctx is done (the call is abandoned, and its late response dropped),
// or when the worker dies (ErrWorkerDied) or is closed (ErrClosed). A handler's error comes
// back through the ErrorCodec. Calls from one goroutine are served in the order made; the
// worker serves one call at a time, in arrival order.
func (p *Process) Call(ctx context.Context, req []byte) ([]byte, error) {
	c, err := p.Start(ctx, req)
	if err != nil {
		return nil, err
	}
	return c.Wait(ctx)
}

// Pending is a call started with Start, whose response Wait collects. It is a value: a call
// costs no more than its channel and frame.
type Pending struct {
	p  *Process
	id uint64
	ch chan reply
}

// Start sends req to the worker's handler as Call does, and returns once it is in the
// worker's queue, without waiting for the response: the caller collects it with Wait, and may
// start or post more requests meanwhile, which the worker serves after this one. A caller that
// will not wait for it after all must still call Wait (with a done context, say) so that its
// late response is dropped.
func (p *Process) Start(ctx context.Context, req []byte) (Pending, error) {
	if len(req) > p.MaxMessage() {
		return Pending{}, fmt.Errorf("%w: a %d-byte request (at most %d)", ErrTooLarge, len(req), p.MaxMessage())
	}
	if err := ctx.Err(); err != nil {
		return Pending{}, err
	}
	c := Pending{p: p, id: p.nextID.Add(1), ch: make(chan reply, 1)}
	p.mu.Lock()
	if p.failed != nil {
		err := p.failed
		p.mu.Unlock()
		return Pending{}, err
	}
	p.pending[c.id] = c.ch
	p.mu.Unlock()

	buf := appendFrame(make([]byte, 0, headerSize+len(req)), kindCall, c.id, 0, req)
	if err := p.data.send(ctx, buf); err != nil {
		p.forget(c.id)
		if ferr := p.failure(); ferr != nil {
			return Pending{}, ferr // the send failed because the worker is gone
		}
		return Pending{}, fmt.Errorf("worker: sending a call to process %d: %w", p.pid, err)
	}
	return c, nil
}

// Wait waits for the response of a started call, as Call does once its request is sent. When
// ctx ends first the call is abandoned: its late response is dropped. Call it once.
func (c *Pending) Wait(ctx context.Context) ([]byte, error) {
	r, err := c.p.awaitReply(ctx, c.ch)
	if err != nil {
		c.p.forget(c.id)
		return nil, err
	}
	return r.data, r.err
}

// Post sends req to the worker's handler without waiting for, or getting, an answer: the
// handler runs it in order with the calls, and whatever it returns is dropped. It returns once
// req is in the worker's queue (waiting while the queue is full, until ctx ends), or with the
// worker's failure when it is gone. Posting spares a round trip per request, so that the
// parent goes on while the worker runs it: for requests whose failure the handler reports in
// the answer to a later call.
func (p *Process) Post(ctx context.Context, req []byte) error {
	if len(req) > p.MaxMessage() {
		return fmt.Errorf("%w: a %d-byte request (at most %d)", ErrTooLarge, len(req), p.MaxMessage())
	}
	if err := p.failure(); err != nil {
		return err
	}
	buf := appendFrame(make([]byte, 0, headerSize+len(req)), kindPost, 0, 0, req)
	if err := p.data.send(ctx, buf); err != nil {
		if ferr := p.failure(); ferr != nil {
			return ferr
		}
		return fmt.Errorf("worker: posting to process %d: %w", p.pid, err)
	}
	return nil
}

// forget drops a pending call; its response, if one still comes, is discarded.
func (p *Process) forget(id uint64) {
	p.mu.Lock()
	delete(p.pending, id)
	p.mu.Unlock()
}

func (p *Process) failure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}

// Close asks the worker to exit, waits up to the close timeout (WithCloseTimeout) for it to
// do so, and kills it if it did not; it returns once the process was reaped. Calls pending or
// made after fail with ErrClosed. It returns an error only when the worker had to be killed.
// Idempotent.
//
// A worker that ends some other way while Close runs — killed by someone else, or exiting
// with an error — died: Err reports it once Close returns, whichever came first, Close's
// request or the death. Only an exit with status 0, or Close's own kill, is a clean close.
func (p *Process) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closing = true
		if p.failed == nil {
			p.failed = ErrClosed // new calls fail at once; pending ones when the worker exits
			p.down.Store(true)
		}
		p.mu.Unlock()
		select {
		case <-p.done:
			return // already dead: Err says how
		default:
		}
		// Best effort: a worker that cannot read it is killed below.
		_ = p.ctl.send(context.Background(), appendFrame(nil, kindExit, 0, 0, nil))
		t := time.NewTimer(p.cfg.closeTimeout)
		defer t.Stop()
		select {
		case <-p.done:
		case <-t.C:
			p.mu.Lock()
			p.closeKill = true
			p.mu.Unlock()
			_ = p.cmd.Process.Kill()
			<-p.done
			p.closeErr = fmt.Errorf("worker: process %d did not exit within %v of Close; killed", p.pid, p.cfg.closeTimeout)
		}
	})
	return p.closeErr
}

// Abort ends the worker at once, without asking it to exit: for a worker whose GPU is stuck
// in a kernel that never ends, which only the process's end frees (asking would wait Close's
// timeout for a worker that cannot finish). It is the parent's doing, so it counts as a close,
// not a death: calls pending or made after fail with ErrClosed. It returns once the process
// was reaped; a later Close returns at once.
func (p *Process) Abort() {
	p.mu.Lock()
	p.closing, p.closeKill = true, true
	if p.failed == nil {
		p.failed = ErrClosed
		p.down.Store(true)
	}
	p.mu.Unlock()
	p.kill()
	<-p.done
}

// kill ends the worker at once; the waiter reaps it and fails the calls.
func (p *Process) kill() { _ = p.cmd.Process.Kill() }

// run starts the process's goroutines: the waiter, the readers and the heartbeat.
func (p *Process) run() {
	p.readCtx, p.stopRead = context.WithCancel(context.Background())
	p.readers.Add(1)
	go p.read(p.ctl, true)
	if p.data != p.ctl {
		p.readers.Add(1)
		go p.read(p.data, false)
	}
	go p.wait()
	if p.cfg.pingEvery > 0 {
		go p.heartbeat()
	}
	if p.cfg.callTimeout > 0 {
		p.heard.Store(time.Now().UnixNano())
		go p.checkCalls()
	}
}

// wait reaps the worker, then fails every pending call with how it ended, closes the
// transports and closes done. It is the one place that decides what calls fail with, since
// only it knows the exit status.
func (p *Process) wait() {
	_ = p.cmd.Wait() // its error is the ProcessState's, read below
	close(p.exited)
	p.drainReaders()
	p.mu.Lock()
	var cause error
	// A worker Close asked to exit ends with status 0, or by Close's kill; any other end is a
	// death, though Close had begun: what Err says must not depend on which came first.
	if p.closing && !p.hung && (p.closeKill || p.cmd.ProcessState.Success()) {
		cause = ErrClosed
	} else {
		d := &DiedError{Pid: p.pid, Status: p.cmd.ProcessState.String(), Hung: p.hung, Stderr: p.stderr.String()}
		if d.Hung {
			d.HungAfter = p.cfg.hungAfter
		}
		cause = d
		if p.err == nil || p.hung {
			p.err = d
		}
	}
	if p.failed == nil || p.hung {
		p.failed = cause
		p.down.Store(true)
	}
	cause = p.failed
	pend := p.pending
	p.pending = map[uint64]chan reply{}
	p.mu.Unlock()
	for _, ch := range pend {
		ch <- reply{err: cause}
	}
	_ = p.data.close()
	_ = p.ctl.close()
	close(p.done)
}

// drainReaders lets the readers take what the reaped worker left in the transports, then
// waits for them to stop, for exitGrace at most: nothing more can arrive.
func (p *Process) drainReaders() {
	p.stopRead()
	done := make(chan struct{})
	go func() { p.readers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(exitGrace):
	}
}

// read receives frames from t until it fails, and routes them: replies and errors to their
// calls, heartbeat answers to the heartbeat. When the control socket fails, the worker has
// closed it by exiting (or is about to be): give it a moment, then kill it so it is reaped.
func (p *Process) read(t transport, control bool) {
	defer p.readers.Done()
	buf := make([]byte, t.maxFrame()+1)
	for {
		b, err := t.recv(p.readCtx, buf)
		if err != nil {
			break
		}
		f, err := parseFrame(b)
		if err != nil {
			break // a worker that speaks nonsense is not one to trust: it is killed below
		}
		p.dispatch(f)
	}
	if !control {
		// The rings fail only when wait closes them, after the worker was reaped, or when the
		// worker wrote nonsense into them: then it is not one to trust.
		select {
		case <-p.exited:
		default:
			p.kill()
		}
		return
	}
	select {
	case <-p.exited:
	case <-time.After(exitGrace):
		p.kill()
	}
}

// dispatch routes one frame from the worker.
func (p *Process) dispatch(f frame) {
	if p.cfg.callTimeout > 0 {
		p.heard.Store(time.Now().UnixNano())
	}
	switch f.kind {
	case kindPong:
		p.lastPong.Store(time.Now().UnixNano())
	case kindReply, kindError:
		p.mu.Lock()
		ch, ok := p.pending[f.id]
		delete(p.pending, f.id)
		p.mu.Unlock()
		if !ok {
			return // abandoned by its caller
		}
		switch {
		case f.kind == kindError && f.code == codeTooLarge:
			ch <- reply{err: fmt.Errorf("%w: %s", ErrTooLarge, f.payload)}
		case f.kind == kindError:
			ch <- reply{err: p.cfg.codec.Decode(f.code, string(f.payload))}
		default:
			ch <- reply{data: append([]byte(nil), f.payload...)}
		}
	}
}

// heartbeat pings the worker and kills it as hung when answers stop for hungAfter. Pings go
// out from a goroutine of their own: a frozen worker stops reading, the socket fills with
// calls, and a blocked send must not stop the clock.
func (p *Process) heartbeat() {
	pings := make(chan uint64, 1)
	defer close(pings)
	go func() {
		for seq := range pings {
			if p.ctl.send(context.Background(), appendFrame(nil, kindPing, seq, 0, nil)) != nil {
				for range pings { // the socket is gone: the reader and the waiter take over
				}
				return
			}
		}
	}()
	t := time.NewTicker(p.cfg.pingEvery)
	defer t.Stop()
	var seq uint64
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
		}
		if time.Since(time.Unix(0, p.lastPong.Load())) > p.cfg.hungAfter {
			p.hang(p.cfg.hungAfter)
			return
		}
		seq++
		select {
		case pings <- seq:
		default: // the last ping is still being sent
		}
	}
}

// hang kills the worker as hung, silent for after: its calls fail with a *DiedError matching
// ErrWorkerHung. Not while Close runs: Close has its own timeout.
func (p *Process) hang(after time.Duration) {
	p.mu.Lock()
	closing := p.closing
	if !closing {
		p.hung = true
		p.err = &DiedError{Pid: p.pid, Status: "killed", Hung: true, HungAfter: after}
	}
	p.mu.Unlock()
	if !closing {
		p.kill()
	}
}

// checkCalls is WithCallTimeout's check: while calls wait and nothing has been heard from the
// worker for the timeout, ping it, and kill it as hung when it does not answer either. A
// worker busy with a long call answers the ping from its reading goroutine; only a frozen one
// stays silent. It runs beside the heartbeat, and matters where that is off.
func (p *Process) checkCalls() {
	d := p.cfg.callTimeout
	t := time.NewTicker(max(d/4, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
		}
		p.mu.Lock()
		waiting := len(p.pending) > 0
		p.mu.Unlock()
		if !waiting || time.Since(time.Unix(0, p.heard.Load())) < d {
			continue
		}
		heard := p.heard.Load()
		go func() { _ = p.ctl.send(context.Background(), appendFrame(nil, kindPing, 0, 0, nil)) }()
		answer := time.NewTimer(d)
		for p.heard.Load() == heard {
			select {
			case <-p.done:
				answer.Stop()
				return
			case <-answer.C:
				p.hang(2 * d)
				return
			case <-t.C:
			}
		}
		answer.Stop()
	}
}
