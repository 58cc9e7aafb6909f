package jetstream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// Job is one unit of work for a worker: the handler that runs it and its input.
type Job struct {
	// ID names the job, unique per queue; empty, Submit makes one. Submitting the same ID
	// twice within the stream's duplicate window (2 minutes) queues it once.
	ID      string
	Handler string // a handler registered in some worker (Worker.Handle)
	Input   []byte
}

// Client submits jobs to the workers of a queue and gathers their results.
type Client struct {
	conn    *Conn
	id      string
	cons    jetstream.ConsumeContext
	jobs    jetstream.Stream
	mu      sync.Mutex
	pending map[string]*Future
	known   map[string]bool // handlers some worker answered for
	dropped atomic.Uint64
	closed  bool
}

// ClientOption configures NewClient.
type ClientOption func(*clientConfig)

type clientConfig struct{ name string }

// WithClientName names the client in its results subject, NAME.results.<name>.<unique id>
// (default "client"): a NATS user allowed to read the results of one name only (see the
// README's permissions) reads no other user's results.
func WithClientName(name string) ClientOption { return func(c *clientConfig) { c.name = name } }

// NewClient makes a client on conn; it gets the results of the jobs it submits from then on.
func NewClient(ctx context.Context, conn *Conn, opts ...ClientOption) (*Client, error) {
	cfg := clientConfig{name: "client"}
	for _, o := range opts {
		o(&cfg)
	}
	if err := checkName("client name", cfg.name); err != nil {
		return nil, err
	}
	c := &Client{conn: conn, id: cfg.name + "." + nuid.Next(), pending: map[string]*Future{}, known: map[string]bool{}}
	var rs jetstream.Stream
	err := conn.denied.guard(ctx, func(ctx context.Context) error {
		var err error
		if c.jobs, err = conn.js.Stream(ctx, conn.subj.jobStream()); err != nil {
			return fmt.Errorf("job stream: %w", err)
		}
		if rs, err = conn.js.Stream(ctx, conn.subj.resultStream()); err != nil {
			return fmt.Errorf("result stream: %w", err)
		}
		return nil
	}, conn.subj.jobStream(), conn.subj.resultStream())
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	// The result consumer starts at a definite sequence, not at "new": an ordered consumer
	// that is made again before its first message (its server lost, a reconnect) would
	// otherwise start at the stream's end then, past the results published in between.
	err = conn.denied.guard(ctx, func(ctx context.Context) error {
		cons, err := conn.js.OrderedConsumer(ctx, conn.subj.resultStream(), jetstream.OrderedConsumerConfig{
			FilterSubjects: []string{conn.subj.results(c.id)},
			DeliverPolicy:  jetstream.DeliverByStartSequencePolicy, OptStartSeq: rs.CachedInfo().State.LastSeq + 1,
		})
		if err != nil {
			return err
		}
		c.cons, err = cons.Consume(c.result)
		return err
	}, conn.subj.resultStream())
	if err != nil {
		return nil, fmt.Errorf("jetstream: result consumer: %w", err)
	}
	return c, nil
}

// Future is the result of a submitted job.
type Future struct {
	id   string
	done chan struct{}
	out  []byte
	err  error
	stop func() bool // stops the cancellation watch
	seq  uint64
}

// ID is the job's id.
func (f *Future) ID() string { return f.id }

// Done is closed once the job's result, or its error, is in.
func (f *Future) Done() <-chan struct{} { return f.done }

// Wait returns the job's output once it is in, or ctx's error first. A job's error is a
// *JobError when it ran and failed.
func (f *Future) Wait(ctx context.Context) ([]byte, error) {
	select {
	case <-f.done:
		return f.out, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Submit queues job and returns its future at once; the future completes with the first
// result of the job to arrive (a job run again after its worker died completes once). The
// job's deadline is ctx's: a worker does not start it after that, and runs it under it.
// Cancelling ctx fails the future with ctx's error: a job not yet started leaves the queue,
// one that has started runs on and its result is discarded. Submit fails the future at once
// with ErrUnknownHandler when no worker answers for the handler, and with ErrTooLarge for an
// input over the server's limit.
func (c *Client) Submit(ctx context.Context, job Job) *Future {
	if job.ID == "" {
		job.ID = nuid.Next()
	}
	f := &Future{id: job.ID, done: make(chan struct{})}
	if err := c.check(ctx, job); err != nil {
		f.err = err
		close(f.done)
		return f
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		f.err = ErrClosed
		close(f.done)
		return f
	}
	if _, dup := c.pending[job.ID]; dup {
		c.mu.Unlock()
		f.err = fmt.Errorf("jetstream: job %s is already pending in this client", job.ID)
		close(f.done)
		return f
	}
	c.pending[job.ID] = f
	c.mu.Unlock()

	msg := nats.NewMsg(c.conn.subj.jobs(job.Handler))
	if c.conn.toObject(len(job.Input)) {
		if err := c.conn.putObject(ctx, msg, "in-"+job.ID, job.Input); err != nil {
			c.complete(job.ID, nil, err)
			return f
		}
	} else {
		msg.Data = job.Input
	}
	msg.Header.Set(hdrReply, c.conn.subj.results(c.id))
	if dl, ok := ctx.Deadline(); ok {
		msg.Header.Set(hdrDeadline, dl.UTC().Format(time.RFC3339Nano))
	}
	ack, err := c.conn.publish(ctx, msg, job.ID)
	if err != nil {
		c.complete(job.ID, nil, fmt.Errorf("jetstream: submit job %s: %w", job.ID, err))
		return f
	}
	c.mu.Lock()
	f.seq = ack.Sequence
	if _, ok := c.pending[job.ID]; ok {
		f.stop = context.AfterFunc(ctx, func() { c.cancel(f, ctx.Err()) })
	}
	c.mu.Unlock()
	return f
}

// publishAttempt bounds one attempt to publish: a request whose answer is lost (its server
// killed after taking it, a stream leader lost mid-request) would otherwise wait for all of
// ctx, however long, and never be tried again.
const publishAttempt = 3 * time.Second

// publish publishes msg with message id id, again while the servers do not answer (a cluster
// electing a leader) until ctx ends: the message id makes a publish that got through but whose
// answer was lost count once. A subject the user may not publish to fails it at once.
func (c *Conn) publish(ctx context.Context, msg *nats.Msg, id string) (*jetstream.PubAck, error) {
	var ack *jetstream.PubAck
	err := c.denied.guard(ctx, func(ctx context.Context) error {
		var err error
		ack, err = publishRetry(ctx, c.js, msg, id)
		return err
	}, msg.Subject)
	return ack, err
}

// publishRetry publishes msg with message id id, each attempt bounded by publishAttempt, again
// on a transient error until ctx ends.
func publishRetry(ctx context.Context, js jetstream.JetStream, msg *nats.Msg, id string) (*jetstream.PubAck, error) {
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		actx, cancel := context.WithTimeout(ctx, publishAttempt)
		ack, err := js.PublishMsg(actx, msg, jetstream.WithMsgID(id))
		cancel()
		if err == nil || ctx.Err() != nil || !transient(err) {
			return ack, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(wait):
		}
	}
}

// transient says whether err is of servers that may answer later.
func transient(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrConnectionReconnecting) || errors.Is(err, nats.ErrDisconnected) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoServers)
}

// check refuses a job before it is published.
func (c *Client) check(ctx context.Context, job Job) error {
	if err := checkName("handler", job.Handler); err != nil {
		return err
	}
	if err := checkName("job id", job.ID); err != nil {
		return err
	}
	if limit := c.conn.MaxPayload() - headerRoom; !c.conn.toObject(len(job.Input)) && int64(len(job.Input)) > limit {
		return fmt.Errorf("%w: job %s input is %d bytes, the server takes %d", ErrTooLarge, job.ID, len(job.Input), limit)
	}
	c.mu.Lock()
	known := c.known[job.Handler]
	c.mu.Unlock()
	if known {
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := c.conn.denied.guard(rctx, func(ctx context.Context) error {
		_, err := c.conn.nc.RequestWithContext(ctx, c.conn.subj.handler(job.Handler), nil)
		return err
	}, c.conn.subj.handler(job.Handler))
	if errors.Is(err, nats.ErrNoResponders) {
		return fmt.Errorf("%w: %q (no live worker registered it)", ErrUnknownHandler, job.Handler)
	}
	if err != nil {
		return fmt.Errorf("jetstream: asking the workers for handler %q: %w", job.Handler, err)
	}
	c.mu.Lock()
	c.known[job.Handler] = true
	c.mu.Unlock()
	return nil
}

// cancel fails f with why and takes its job out of the queue if no worker has it yet. The
// future stops taking a result at once, and fails once the job is out: then a job no worker
// held runs nowhere.
func (c *Client) cancel(f *Future, why error) {
	c.mu.Lock()
	_, pending := c.pending[f.id]
	delete(c.pending, f.id)
	seq := f.seq
	c.mu.Unlock()
	if !pending {
		return
	}
	// A job a worker holds is not in the stream's unacknowledged set's way: deleting it fails
	// or leaves the worker's ack a no-op, and its result finds no pending future.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.conn.denied.guard(ctx, func(ctx context.Context) error { return c.jobs.DeleteMsg(ctx, seq) }, c.conn.subj.jobStream())
	f.out, f.err = nil, why
	close(f.done)
}

// result takes a result message off the client's subject.
func (c *Client) result(m jetstream.Msg) {
	h := m.Headers()
	id := h.Get(hdrJob)
	if id == "" {
		return // not a result of this package
	}
	var err error
	if msg := h.Get(hdrErr); msg != "" {
		err = &JobError{Job: id, Handler: h.Get(hdrHandler), Worker: h.Get(hdrWorker), Kind: h.Get(hdrErrKind), Msg: msg}
	}
	out := m.Data()
	if err == nil && h.Get(hdrObject) != "" {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if out, err = c.conn.payload(ctx, h, nil); err != nil {
			err = fmt.Errorf("%w: job %s: %w", ErrBadResult, id, err)
		}
		c.conn.dropObject(ctx, h)
	}
	if !c.complete(id, out, err) {
		c.dropped.Add(1)
	}
}

// Discarded counts the results that found no pending future: of jobs run again after a worker
// died under them, whose first result was in, and of cancelled jobs.
func (c *Client) Discarded() uint64 { return c.dropped.Load() }

// complete completes the pending future of job id, once: it reports whether it did.
func (c *Client) complete(id string, out []byte, err error) bool {
	c.mu.Lock()
	f, ok := c.pending[id]
	delete(c.pending, id)
	var stop func() bool
	if ok {
		stop = f.stop
	}
	c.mu.Unlock()
	if !ok {
		return false
	}
	if stop != nil {
		stop()
	}
	f.out, f.err = out, err
	close(f.done)
	return true
}

// Pending counts the jobs submitted whose results are not in.
func (c *Client) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// Close stops taking results and fails every pending future with ErrClosed; the jobs stay
// queued.
func (c *Client) Close() {
	c.mu.Lock()
	c.closed = true
	ids := make([]string, 0, len(c.pending))
	for id := range c.pending {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	c.cons.Stop()
	for _, id := range ids {
		c.complete(id, nil, ErrClosed)
	}
}
