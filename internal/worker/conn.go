package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Handler serves one call in the worker: it gets the request, which it may keep only until it
// returns, and returns the response or an error for the parent (through the ErrorCodec).
type Handler func(ctx context.Context, req []byte) ([]byte, error)

// Conn is the worker's end of the connection to its parent, given to the function Main runs.
type Conn struct {
	ctl  transport
	data transport

	mu    sync.Mutex
	queue []frame       // calls received, not yet served
	wake  chan struct{} // a call was queued (capacity 1)
	gone  chan struct{} // closed when the parent asked the worker to exit, or went away
	once  sync.Once

	serving atomic.Bool
	direct  bool // Serve reads calls from data itself (the rings) rather than from the queue
}

// codeTooLarge is the error code, reserved by this package, of a response larger than the
// transport carries; codes below 0 are the package's and never reach the ErrorCodec.
const codeTooLarge int64 = -1

// ServeOption configures Serve.
type ServeOption func(*serveConfig)

type serveConfig struct {
	codec ErrorCodec
	idle  func() bool
}

// ServeIdle gives the server something to do between requests: fn runs while Serve waits for
// the next one (over the rings, every few dozen polls of their spin, which goes on past its
// window while fn reports work in hand) and, while requests keep coming, at most every
// idleEvery between them. A worker polls its GPU's events this way, so that the parent can
// read their state from shared memory instead of asking. fn runs on Serve's goroutine.
func ServeIdle(fn func() (busy bool)) ServeOption { return func(c *serveConfig) { c.idle = fn } }

// idleEvery is how often, at most, ServeIdle's function runs between requests that keep
// coming.
const idleEvery = 2 * time.Microsecond

// ServeCodec sets how the handler's errors are encoded for the parent (default DefaultCodec);
// the parent must decode with the same codec (WithErrorCodec).
func ServeCodec(codec ErrorCodec) ServeOption {
	return func(c *serveConfig) {
		if codec != nil {
			c.codec = codec
		}
	}
}

func newConn(ctl, data transport) *Conn {
	return &Conn{ctl: ctl, data: data, wake: make(chan struct{}, 1), gone: make(chan struct{})}
}

// Gone is closed once the parent asked the worker to exit (Close) or went away: the worker
// should finish and return from the function Main runs.
func (c *Conn) Gone() <-chan struct{} { return c.gone }

// Serve runs h on every call, one at a time in the order they arrived, and sends each result
// back; posted requests (Process.Post) are served in the same order, and their results and
// errors are dropped, so a handler that wants the parent to learn of a posted request's
// failure keeps it and reports it in the answer to a later call. It returns nil when ctx is done or the parent is gone, or an error when a result
// could not be sent. It may be called once.
func (c *Conn) Serve(ctx context.Context, h Handler, opts ...ServeOption) error {
	if h == nil {
		return errors.New("worker: Serve with a nil handler")
	}
	if !c.serving.CompareAndSwap(false, true) {
		return errors.New("worker: Serve called twice")
	}
	cfg := serveConfig{codec: DefaultCodec{}}
	for _, o := range opts {
		o(&cfg)
	}
	// The handler's context also ends when the parent asks the worker to exit, or goes away.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-c.gone:
			cancel()
		case <-ctx.Done():
		}
	}()
	var out []byte
	in := make([]byte, c.data.maxFrame()+1)
	var lastIdle time.Time
	if cfg.idle != nil {
		if rt, ok := c.data.(*ringTransport); ok && c.direct {
			rt.in.SetIdle(cfg.idle)
			defer rt.in.SetIdle(nil)
		}
	}
	for {
		if cfg.idle != nil {
			if now := time.Now(); now.Sub(lastIdle) >= idleEvery {
				cfg.idle()
				lastIdle = now
			}
		}
		f, ok := c.next(ctx, in)
		if !ok {
			return nil
		}
		resp, err := h(ctx, f.payload)
		if f.kind == kindPost {
			continue // no answer is wanted: a posted request's handler reports failure its own way
		}
		switch {
		case err != nil:
			code, msg := cfg.codec.Encode(err)
			if code < 0 {
				return fmt.Errorf("worker: the codec gave code %d; codes below 0 are reserved", code)
			}
			out = appendFrame(out[:0], kindError, f.id, code, []byte(msg))
		case headerSize+len(resp) > c.data.maxFrame():
			msg := fmt.Sprintf("a %d-byte response (at most %d)", len(resp), c.data.maxFrame()-headerSize)
			out = appendFrame(out[:0], kindError, f.id, codeTooLarge, []byte(msg))
		default:
			out = appendFrame(out[:0], kindReply, f.id, 0, resp)
		}
		if len(out) > c.data.maxFrame() { // an error message too long to carry: cut it
			out = out[:c.data.maxFrame()]
		}
		if err := c.data.send(ctx, out); err != nil {
			select {
			case <-c.gone:
				return nil
			default:
			}
			return fmt.Errorf("worker: sending a response: %w", err)
		}
	}
}

// next takes the next call, waiting for one; false once ctx is done or the parent is gone.
// Over the control socket calls come queued by the socket's reader, which must go on reading
// to answer heartbeats; over the rings Serve reads the request ring itself, which saves a
// hand-off between goroutines on every call (heartbeats come on the socket).
func (c *Conn) next(ctx context.Context, buf []byte) (frame, bool) {
	for {
		select { // once told to go, serve nothing more: the queued calls fail as closed
		case <-ctx.Done():
			return frame{}, false
		case <-c.gone:
			return frame{}, false
		default:
		}
		if c.direct {
			b, err := c.data.recv(ctx, buf)
			if err != nil {
				return frame{}, false
			}
			f, err := parseFrame(b)
			if err != nil || (f.kind != kindCall && f.kind != kindPost) {
				return frame{}, false // only requests come on the request ring
			}
			return f, true
		}
		c.mu.Lock()
		if len(c.queue) > 0 {
			f := c.queue[0]
			c.queue[0] = frame{}
			c.queue = c.queue[1:]
			c.mu.Unlock()
			return f, true
		}
		c.mu.Unlock()
		select {
		case <-c.wake:
		case <-ctx.Done():
			return frame{}, false
		case <-c.gone:
			return frame{}, false
		}
	}
}

// leave marks the parent gone.
func (c *Conn) leave() { c.once.Do(func() { close(c.gone) }) }

// read receives frames from t until it fails: calls are queued for Serve (never blocking, so
// heartbeats are answered while calls wait), pings answered at once. The control socket
// failing means the parent is gone.
func (c *Conn) read(t transport, control bool) {
	buf := make([]byte, t.maxFrame()+1)
	for {
		b, err := t.recv(context.Background(), buf)
		if err != nil {
			break
		}
		f, err := parseFrame(b)
		if err != nil {
			break
		}
		switch f.kind {
		case kindCall, kindPost:
			f.payload = append([]byte(nil), f.payload...)
			c.mu.Lock()
			c.queue = append(c.queue, f)
			c.mu.Unlock()
			select {
			case c.wake <- struct{}{}:
			default:
			}
		case kindPing:
			_ = c.ctl.send(context.Background(), appendFrame(nil, kindPong, f.id, 0, nil))
		case kindExit:
			c.leave()
		}
	}
	if control {
		c.leave()
	}
}
