package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/streams"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// Handler runs one job on the device and stream the group gave it: the group's job signature,
// with the job's input and output as bytes. It is code registered in the worker; a message
// names it and carries its data, never code.
type Handler func(ctx context.Context, d *device.Device, s *streams.Stream, in []byte) ([]byte, error)

// Worker serves the jobs of a queue with the device group of its host.
type Worker struct {
	conn     *Conn
	g        *group.Group
	name     string
	perDev   int
	maxIn    int
	log      *slog.Logger
	handlers map[string]Handler
	serving  atomic.Bool
	ready    chan struct{}

	inflight atomic.Int64
	freed    chan struct{}
	wg       sync.WaitGroup
	stats    workerStats
}

// WorkerOption configures NewWorker.
type WorkerOption func(*Worker)

// WithWorkerName names the worker in results, dead letters and Stats (default: host name and
// a unique suffix).
func WithWorkerName(name string) WorkerOption { return func(w *Worker) { w.name = name } }

// WithStreamsPerDevice says how many jobs each healthy device of the group runs at once: the
// worker takes no more jobs off the queue than that many times its healthy devices (default 4,
// the group's default streams per device).
func WithStreamsPerDevice(n int) WorkerOption { return func(w *Worker) { w.perDev = n } }

// WithInputLimit refuses a job whose input is over n bytes before it runs, so before it gets
// any GPU memory (default: the server's max payload, or 1 GiB with WithObjectStore).
func WithInputLimit(n int) WorkerOption { return func(w *Worker) { w.maxIn = n } }

// WithWorkerLogger logs the worker's trouble with the queue (default: none).
func WithWorkerLogger(l *slog.Logger) WorkerOption { return func(w *Worker) { w.log = l } }

// NewWorker makes a worker that runs jobs on g, taken from the queue of conn. Register its
// handlers with Handle, then Serve.
func NewWorker(conn *Conn, g *group.Group, opts ...WorkerOption) *Worker {
	host, _ := os.Hostname()
	w := &Worker{
		conn: conn, g: g, name: host + "-" + nuid.Next()[:6], perDev: 4, maxIn: int(conn.MaxPayload()),
		log: slog.New(slog.DiscardHandler), handlers: map[string]Handler{}, freed: make(chan struct{}, 1),
		ready: make(chan struct{}),
	}
	if conn.cfg.objectAbove > 0 {
		w.maxIn = 1 << 30
	}
	for _, o := range opts {
		o(w)
	}
	w.stats.handlers = map[string]*handlerStats{}
	return w
}

// Handle registers h under name, before Serve.
func (w *Worker) Handle(name string, h Handler) error {
	if err := checkName("handler", name); err != nil {
		return err
	}
	if h == nil {
		return fmt.Errorf("jetstream: handler %q is nil", name)
	}
	if w.serving.Load() {
		return fmt.Errorf("jetstream: handler %q registered after Serve", name)
	}
	if _, dup := w.handlers[name]; dup {
		return fmt.Errorf("jetstream: handler %q registered twice", name)
	}
	w.handlers[name] = h
	w.stats.handlers[name] = &handlerStats{}
	return nil
}

// Serve takes jobs for the registered handlers off the queue and runs them on the group until
// ctx ends; it then takes no more, and returns once the jobs it holds have finished and their
// results are out (drain: cancel ctx on SIGTERM). Its error says why it could not start.
func (w *Worker) Serve(ctx context.Context) error {
	if len(w.handlers) == 0 {
		return errors.New("jetstream: worker has no handlers")
	}
	if !w.serving.CompareAndSwap(false, true) {
		return errors.New("jetstream: worker is serving already")
	}
	var subs []*nats.Subscription
	defer func() {
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
	}()
	cons := map[string]jetstream.Consumer{}
	for name := range w.handlers {
		err := w.conn.denied.guard(ctx, func(ctx context.Context) error {
			c, err := w.conn.js.CreateOrUpdateConsumer(ctx, w.conn.subj.jobStream(), jetstream.ConsumerConfig{
				Durable: w.conn.subj.consumer(name), FilterSubject: w.conn.subj.jobs(name),
				AckPolicy: jetstream.AckExplicitPolicy, AckWait: w.conn.cfg.ackWait, MaxDeliver: -1, MaxAckPending: 1 << 16,
			})
			cons[name] = c
			return err
		}, w.conn.subj.jobStream())
		if err != nil {
			return fmt.Errorf("jetstream: consumer for handler %q: %w", name, err)
		}
	}
	// Advertise the handlers: a client asks before its first job, and hears no responders
	// when no live worker has one.
	for name := range w.handlers {
		s, err := w.conn.nc.QueueSubscribe(w.conn.subj.handler(name), "workers", func(m *nats.Msg) { _ = m.Respond(nil) })
		if err != nil {
			return fmt.Errorf("jetstream: advertising handler %q: %w", name, err)
		}
		subs = append(subs, s)
	}
	// A denied subscription fails silently: the server's word on it comes before the answer
	// to a flush.
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := w.conn.nc.FlushWithContext(fctx); err != nil {
		return fmt.Errorf("jetstream: advertising handlers: %w", err)
	}
	for _, s := range subs {
		if err := w.conn.nc.LastError(); errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), `"`+s.Subject+`"`) {
			return fmt.Errorf("%w: advertising handlers: %w", ErrPermission, err)
		}
	}
	var kv jetstream.KeyValue
	err := w.conn.denied.guard(ctx, func(ctx context.Context) error {
		var err error
		kv, err = w.conn.js.KeyValue(ctx, w.conn.subj.errorBucket())
		return err
	}, "KV_"+w.conn.subj.errorBucket())
	if err != nil {
		return fmt.Errorf("jetstream: error bucket: %w", err)
	}
	jobs := context.WithoutCancel(ctx)
	close(w.ready)
	var loops sync.WaitGroup
	for name, c := range cons {
		loops.Go(func() { w.pull(ctx, jobs, kv, name, c) })
	}
	loops.Wait()
	w.wg.Wait()
	return nil
}

// Ready is closed once Serve has made its consumers and advertises its handlers: from then on
// clients find them.
func (w *Worker) Ready() <-chan struct{} { return w.ready }

// capacity is how many jobs the group can run at once now: its healthy devices' streams.
func (w *Worker) capacity() int64 {
	n := int64(0)
	for _, d := range w.g.Stats().Devices {
		if d.Healthy {
			n += int64(w.perDev)
		}
	}
	return n
}

// pull takes jobs of one handler off the queue while the group has room for them.
func (w *Worker) pull(ctx, jobs context.Context, kv jetstream.KeyValue, name string, c jetstream.Consumer) {
	for ctx.Err() == nil {
		free := w.capacity() - w.inflight.Load()
		if free <= 0 {
			select {
			case <-w.freed:
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond): // a device may come back
			}
			continue
		}
		batch, err := c.Fetch(int(min(free, 256)), jetstream.FetchMaxWait(500*time.Millisecond))
		if err != nil {
			w.log.Warn("fetch", "handler", name, "err", err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		for m := range batch.Messages() {
			w.inflight.Add(1)
			w.wg.Go(func() {
				defer w.release()
				w.run(jobs, kv, name, m)
			})
		}
	}
}

func (w *Worker) release() {
	w.inflight.Add(-1)
	select {
	case w.freed <- struct{}{}:
	default:
	}
}

// run runs one job message and settles it: acknowledged with its result out, handed back for
// another attempt, or terminated with its error out (and, out of attempts, a dead letter).
func (w *Worker) run(ctx context.Context, kv jetstream.KeyValue, name string, m jetstream.Msg) {
	st := w.stats.of(name)
	h := m.Headers()
	id, reply := h.Get(hdrMsgID), h.Get(hdrReply)
	if id == "" || reply == "" {
		st.refused.Add(1)
		_ = m.Term() // not a job of this package
		return
	}
	if !w.conn.subj.isResults(reply) {
		st.refused.Add(1)
		_ = m.Term() // its result would go to no client of this queue
		return
	}
	j := jobMsg{id: id, handler: name, reply: reply}
	md, err := m.Metadata()
	if err != nil {
		_ = m.Nak()
		return
	}
	attempt := int(md.NumDelivered)
	if n := size(h, m.Data()); n > w.maxIn {
		st.refused.Add(1)
		w.settle(ctx, m, j, nil, kindTooLarge, fmt.Sprintf("input is %d bytes, this worker takes %d", n, w.maxIn))
		return
	}
	var deadline time.Time
	if s := h.Get(hdrDeadline); s != "" {
		deadline, _ = time.Parse(time.RFC3339Nano, s)
		if !deadline.IsZero() && time.Now().After(deadline) {
			st.refused.Add(1)
			w.settle(ctx, m, j, nil, kindDeadline, "deadline "+s+" passed before it started")
			return
		}
	}
	if attempt > w.conn.cfg.maxAttempts {
		w.deadLetter(ctx, kv, m, j, attempt, "", w.errorsOf(ctx, kv, j.id))
		return
	}

	in, err := w.conn.payload(ctx, h, m.Data())
	if err != nil {
		w.log.Warn("input not read; job handed back", "job", id, "err", err)
		_ = m.NakWithDelay(time.Second)
		return
	}
	stop := w.keepAlive(m)
	jctx, cancel := ctx, context.CancelFunc(func() {})
	if !deadline.IsZero() {
		jctx, cancel = context.WithDeadline(ctx, deadline)
	}
	start := time.Now()
	var out []byte
	herr := w.g.Submit(jctx, func(ctx context.Context, d *device.Device, s *streams.Stream) error {
		var err error
		out, err = w.handlers[name](ctx, d, s, in)
		return err
	}).Wait(jctx)
	cancel()
	stop()
	st.observe(time.Since(start))
	if herr == nil && !w.conn.toObject(len(out)) && len(out) > int(w.conn.MaxPayload())-headerRoom {
		herr = Permanent(fmt.Errorf("%w: result is %d bytes, the server takes %d", ErrTooLarge, len(out), w.conn.MaxPayload()-headerRoom))
	}
	var perm permanent
	switch {
	case herr == nil:
		st.done.Add(1)
		w.settle(ctx, m, j, out, "", "")
		if attempt > 1 {
			_ = w.conn.guardErrors(ctx, func(ctx context.Context) error { return kv.Purge(ctx, j.id) }) // the errors of its earlier attempts, if any
		}
	case errors.As(herr, &perm):
		st.failed.Add(1)
		w.settle(ctx, m, j, nil, kindHandler, herr.Error())
	default:
		errs := w.note(ctx, kv, j, attempt, herr)
		if attempt >= w.conn.cfg.maxAttempts {
			w.deadLetter(ctx, kv, m, j, attempt, herr.Error(), errs)
			return
		}
		st.retried.Add(1)
		_ = m.NakWithDelay(time.Duration(attempt) * 100 * time.Millisecond)
	}
}

// jobMsg is what a worker knows of a job it settles.
type jobMsg struct{ id, handler, reply string }

// keepAlive tells the server, while the job runs, that it is in progress, so that it goes to
// no other worker however long the GPU takes; it returns the function that stops it.
func (w *Worker) keepAlive(m jetstream.Msg) func() {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(max(w.conn.cfg.ackWait/3, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = m.InProgress()
			}
		}
	}()
	return func() { close(done) }
}

// settle publishes the job's result, or its error of kind, and then acknowledges the job (a
// success) or terminates it. A result that cannot be published hands the job back.
func (w *Worker) settle(ctx context.Context, m jetstream.Msg, j jobMsg, out []byte, kind, msg string) {
	r := nats.NewMsg(j.reply)
	if w.conn.toObject(len(out)) {
		if err := w.conn.putObject(ctx, r, "out-"+j.id, out); err != nil {
			w.log.Warn("result not stored; job handed back", "job", j.id, "err", err)
			_ = m.NakWithDelay(time.Second)
			return
		}
	} else {
		r.Data = out
	}
	r.Header.Set(hdrJob, j.id)
	r.Header.Set(hdrHandler, j.handler)
	r.Header.Set(hdrWorker, w.name)
	if kind != "" {
		r.Header.Set(hdrErrKind, kind)
		r.Header.Set(hdrErr, msg)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := w.conn.publish(pctx, r, "r-"+j.id); err != nil {
		w.log.Warn("result not published; job handed back", "job", j.id, "err", err)
		_ = m.NakWithDelay(time.Second)
		return
	}
	if kind == "" {
		_ = m.Ack()
	} else {
		_ = m.Term()
	}
	w.conn.dropObject(ctx, m.Headers()) // the input, of no more use
}

// note keeps the error of one attempt of job j, for its dead letter, and returns the job's
// errors so far. In a cluster a replica may answer a read of the bucket a moment behind: the
// dead letter takes the errors from here rather than reading back what was just written.
func (w *Worker) note(ctx context.Context, kv jetstream.KeyValue, j jobMsg, attempt int, err error) []string {
	errs := w.errorsOf(ctx, kv, j.id)
	errs = append(errs, fmt.Sprintf("attempt %d on %s: %v", attempt, w.name, err))
	b, _ := json.Marshal(errs)
	perr := w.conn.guardErrors(ctx, func(ctx context.Context) error {
		_, err := kv.Put(ctx, j.id, b)
		return err
	})
	if perr != nil {
		w.log.Warn("error of job not kept", "job", j.id, "err", perr)
	}
	return errs
}

func (w *Worker) errorsOf(ctx context.Context, kv jetstream.KeyValue, id string) []string {
	var errs []string
	_ = w.conn.guardErrors(ctx, func(ctx context.Context) error {
		e, err := kv.Get(ctx, id)
		if err == nil {
			_ = json.Unmarshal(e.Value(), &errs)
		}
		return err
	})
	return errs
}

// DeadLetter is the message a job that failed on every attempt leaves on the dead-letter
// subject (<queue>.dead.<handler>), as JSON.
type DeadLetter struct {
	Job      string   `json:"job"`
	Handler  string   `json:"handler"`
	Worker   string   `json:"worker"` // the worker that gave up on it
	Attempts int      `json:"attempts"`
	Errors   []string `json:"errors"` // every error it met, in order; a killed worker leaves none
	Input    []byte   `json:"input"`
}

// deadLetter sends job j, out of attempts, to the dead-letter subject with errs, every error it
// met, fails it to its client, and terminates it.
func (w *Worker) deadLetter(ctx context.Context, kv jetstream.KeyValue, m jetstream.Msg, j jobMsg, attempts int, last string, errs []string) {
	in, err := w.conn.payload(ctx, m.Headers(), m.Data())
	if err != nil {
		errs = append(errs, "input not kept: "+err.Error())
	}
	dl := DeadLetter{Job: j.id, Handler: j.handler, Worker: w.name, Attempts: attempts, Errors: errs, Input: in}
	b, _ := json.Marshal(dl)
	dm := nats.NewMsg(w.conn.subj.dead(j.handler))
	dm.Data = b
	dm.Header.Set(hdrJob, j.id)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := w.conn.publish(pctx, dm, "d-"+j.id); err != nil {
		w.log.Warn("dead letter not published; job handed back", "job", j.id, "err", err)
		_ = m.NakWithDelay(time.Second)
		return
	}
	w.stats.of(j.handler).dead.Add(1)
	if last == "" {
		last = "its workers went silent (killed?)"
	}
	w.settle(ctx, m, j, nil, kindDead, fmt.Sprintf("%d attempts, %d errors, last: %s", attempts, len(errs), last))
	_ = w.conn.guardErrors(ctx, func(ctx context.Context) error { return kv.Purge(ctx, j.id) })
}
