package group

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// Item is a function Pipe runs on one item of its input, as a job of the group on device d and
// stream s: it returns the item's result.
type Item[T, R any] func(ctx context.Context, d *device.Device, s *streams.Stream, item T) (R, error)

// Result is the outcome of one item of Pipe.
type Result[T, R any] struct {
	Index int   // the item's place in the input, from 0
	Item  T     // the item read
	Value R     // what the item's function returned, with its error or not
	Err   error // the function's error, or why it could not run (Submit's errors)
}

// PipeOption configures Pipe.
type PipeOption func(*pipeConfig)

type pipeConfig struct {
	ordered bool
	window  int
	jobOpts any // func(T) []JobOption, of Pipe's T (ItemOptions)
}

// Ordered makes Pipe send the results in the order of the input, instead of the order in which
// the items complete. A result that completes early waits in a buffer for those before it;
// the window (Window) bounds that buffer.
func Ordered() PipeOption { return func(c *pipeConfig) { c.ordered = true } }

// Window bounds how many items Pipe holds at once, from when it reads one from the input to
// when its result is taken from the output: n at least one; by default twice the streams of
// the group (WithStreams times the devices), enough to keep every stream busy. Items also wait
// for room in the group's queue (WithQueue), which other callers share.
func Window(n int) PipeOption { return func(c *pipeConfig) { c.window = n } }

// ItemOptions describes each item's job to the group (Key, Bytes, Idempotent): Pipe calls f
// with the item before it submits its job. f's T must be Pipe's, or every item fails with
// device.ErrInvalidArgument.
func ItemOptions[T any](f func(item T) []JobOption) PipeOption {
	return func(c *pipeConfig) { c.jobOpts = f }
}

// Pipe runs fn on each item read from in, each as a job of g (placed, queued and run as Submit
// does), and sends each item's Result on the channel it returns: in the order the items
// complete, or with Ordered in the order they were read. A job's error, or why it could not
// run, is in its Result; Pipe goes on with the next items.
//
// Backpressure runs through the channels: Pipe reads from in only while it holds fewer items
// than its Window and the group's queue has room, so a consumer that reads the results slowly
// slows the reading of in. (With WithFailFast, an item that finds the group's queue full fails
// with ErrQueueFull, as Submit would.)
//
// The output closes once in is closed and the result of every item read from it sent; or, once
// ctx ends, as soon as the jobs already started have ended: Pipe then reads no more items,
// the jobs still queued leave the queue, the running ones see ctx end, and the results not yet
// sent are dropped, so that a consumer that stops reading and cancels ctx leaves no goroutine
// behind. A consumer that stops reading must cancel ctx; until it does, Pipe waits for it.
// Bad input (a nil group, input or function; a Window below one; ItemOptions of another item
// type) is sent as one Result with an error wrapping device.ErrInvalidArgument, before the
// output closes.
func Pipe[T, R any](ctx context.Context, g *Group, in <-chan T, fn Item[T, R], opts ...PipeOption) <-chan Result[T, R] {
	refuse := func(err error) <-chan Result[T, R] {
		out := make(chan Result[T, R], 1)
		out <- Result[T, R]{Err: err}
		close(out)
		return out
	}
	if err := pipeInput(g, in, fn); err != nil {
		return refuse(err)
	}
	cfg := pipeConfig{window: 2 * g.cfg.streams * len(g.members)}
	for _, o := range opts {
		o(&cfg)
	}
	jobOpts, ok := cfg.jobOpts.(func(T) []JobOption)
	switch {
	case cfg.window < 1:
		return refuse(fmt.Errorf("%w: Pipe: Window(%d): want at least one", device.ErrInvalidArgument, cfg.window))
	case !ok && cfg.jobOpts != nil:
		return refuse(fmt.Errorf("%w: Pipe: ItemOptions takes %T, not the items' type", device.ErrInvalidArgument, cfg.jobOpts))
	}
	p := &pipe[T, R]{
		g: g, fn: fn, jobOpts: jobOpts, out: make(chan Result[T, R]),
		slots: make(chan struct{}, cfg.window),
		done:  make(chan Result[T, R], cfg.window),
		read:  make(chan int, 1),
	}
	go p.feed(ctx, in)
	go p.deliver(ctx, cfg.ordered)
	return p.out
}

func pipeInput[T, R any](g *Group, in <-chan T, fn Item[T, R]) error {
	switch {
	case g == nil:
		return fmt.Errorf("%w: Pipe on a nil group", device.ErrInvalidArgument)
	case in == nil:
		return fmt.Errorf("%w: Pipe from a nil channel", device.ErrInvalidArgument)
	case fn == nil:
		return fmt.Errorf("%w: Pipe of a nil function", device.ErrInvalidArgument)
	}
	return nil
}

// pipe is one call of Pipe: feed reads the input and submits the jobs, whose completions put
// their results in done; deliver sends them on out.
type pipe[T, R any] struct {
	g       *Group
	fn      Item[T, R]
	jobOpts func(T) []JobOption
	out     chan Result[T, R]
	slots   chan struct{}     // one per item held, read and not yet taken from out: the window
	done    chan Result[T, R] // completed results; as roomy as the window, so a send never waits
	read    chan int          // how many items feed read, once it stops
}

// feed reads items from in while the window has room and submits each as a job, until in
// closes or ctx ends; then it tells deliver how many it read.
func (p *pipe[T, R]) feed(ctx context.Context, in <-chan T) {
	n := 0
	defer func() { p.read <- n }()
	for {
		select {
		case p.slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		var item T
		select {
		case it, ok := <-in:
			if !ok {
				return
			}
			item = it
		case <-ctx.Done():
			return
		}
		p.submit(ctx, n, item)
		n++
	}
}

// submit submits the job of the index-th item. Its result goes to done as the job completes,
// refused at once or not, from the completing goroutine: no goroutine waits on a job.
func (p *pipe[T, R]) submit(ctx context.Context, index int, item T) {
	r := &Result[T, R]{Index: index, Item: item}
	var opts []JobOption
	if p.jobOpts != nil {
		opts = p.jobOpts(item)
	}
	job := func(ctx context.Context, d *device.Device, s *streams.Stream) error {
		v, err := p.fn(ctx, d, s, item)
		r.Value = v
		return err
	}
	p.g.submit(ctx, job, opts, actor.CompleteFunc[struct{}](func(_ struct{}, err error) {
		r.Err = err
		p.done <- *r
	}))
}

// deliver sends the results on out as they complete, or in input order, until every item
// feed read has a result; once ctx ends it sends no more but still waits for the results of
// the jobs under way, so that none completes into a pipe that has gone. It closes out.
func (p *pipe[T, R]) deliver(ctx context.Context, ordered bool) {
	defer close(p.out)
	var (
		read     = -1 // items feed read, once it stopped
		received int
		next     int                      // Ordered: the index to send next
		early    = map[int]Result[T, R]{} // Ordered: results ahead of next
		ended    bool                     // ctx ended: results are dropped
	)
	cancelled := ctx.Done() // nil for a context that never ends; made nil once it has
	send := func(r Result[T, R]) {
		if ended {
			return
		}
		select {
		case p.out <- r:
			<-p.slots
		case <-cancelled:
			ended, cancelled = true, nil
		}
	}
	for read < 0 || received < read {
		select {
		case r := <-p.done:
			received++
			if !ordered {
				send(r)
				continue
			}
			early[r.Index] = r
			for r, ok := early[next]; ok; r, ok = early[next] {
				delete(early, next)
				next++
				send(r)
			}
		case read = <-p.read:
		case <-cancelled:
			ended, cancelled = true, nil
		}
	}
}
