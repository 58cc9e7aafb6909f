package device

import (
	"context"
	"errors"
	"fmt"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// A stream-ordered allocation returns its Buffer before the device has made the memory, so that
// queuing one costs the caller no round trip to the actor (a park/wake that dwarfs
// cudaMallocAsync itself). That is safe because every use of a buffer reaches the memory on the
// actor thread, in a message sent after the one that allocates it: the mailbox runs messages in
// the order they were sent, so by then the address is known, or the failure.

// AllocAsync is the extension point of stream-ordered allocation (alloc.MallocAsync): it
// counts size bytes of kind against the device (refusing them with ErrMemoryLimit at once),
// makes b — a zero Buffer, which the caller may hold inside a value of its own to save an
// allocation — the buffer of that memory, and queues op, which makes the memory on the actor
// thread and returns its address. It returns without waiting for op. msg must be a fresh
// future: the message's, which op, when it succeeds, arranges to complete
// (Tracker.AfterFuture); when op fails, or the message is refused unrun, msg completes with
// the error, and every later use of b fails with ErrAllocFailed wrapping it, its charge given
// back. release frees the memory when b is freed with Free or left to Close; it is called
// with the address and the device stream, on the actor thread, once that stream has drained.
//
// When the message cannot be queued (ctx ended, the device is closed or has failed),
// AllocAsync returns the error and nothing is allocated; once it is queued, the allocation
// runs whatever ctx does, and b is the caller's.
func AllocAsync(ctx context.Context, d *Device, b *Buffer, size uint64, kind MemKind, msg *actor.Future[struct{}],
	release func(rt backend.Device, p DevicePtr, s backend.Stream) error, op Allocator) error {
	if b == nil || b.dev != nil {
		return invalid("AllocAsync needs a zero Buffer")
	}
	if size == 0 {
		return invalid("allocation of 0 bytes")
	}
	if err := d.failure(); err != nil {
		return err
	}
	if err := d.Charge(kind, size); err != nil {
		return err
	}
	b.dev, b.size, b.kind, b.release, b.pending, b.msg, b.alloc = d, size, kind, release, true, msg, op
	if f := actor.CallTask(ctx, d.act, msg, actor.Task[struct{}]((*allocTask)(b))); f != msg {
		b.fail(f.Err()) // msg was sent before: refused, nothing queued
		return f.Err()
	}
	// msg failed while made did not complete: op never ran, so nothing was allocated. (op
	// completes made before msg whenever it runs, so this order of checks cannot be fooled.)
	if err := msg.Err(); err != nil && !b.made.Ready() {
		b.fail(err)
		return err
	}
	return nil
}

// Allocator makes the memory of a stream-ordered allocation (AllocAsync), on the actor thread,
// and returns its address. Its parameter types are internal to the module, so code outside it
// cannot implement it.
type Allocator interface {
	Allocate(rt backend.Device, tr *Tracker) (DevicePtr, error)
}

// allocTask is the message of AllocAsync: the buffer itself, which holds the allocation to run,
// so that queuing one allocates nothing more.
type allocTask Buffer

func (t *allocTask) Run(*actor.Future[struct{}]) (struct{}, error) {
	b := (*Buffer)(t)
	op := b.alloc
	b.alloc = nil // the buffer outlives the allocation; what op captured need not
	ok := false
	defer func() {
		if !ok { // op panicked (the actor recovers and fails msg) or called runtime.Goexit
			r := recover()
			b.fail(fmt.Errorf("gpuactor: the allocation did not finish: %v", r))
			if r != nil {
				panic(r)
			}
		}
	}()
	p, err := op.Allocate(b.dev.dev, b.dev.tracker)
	ok = true
	if err != nil {
		b.fail(err)
		return struct{}{}, err
	}
	b.ptr = p
	b.dev.live.buffers.add(b)
	b.made.Complete(struct{}{}, nil) // publishes ptr to PtrWait
	return struct{}{}, actor.ErrPending
}

// fail settles a stream-ordered allocation as failed with cause, unless it was settled
// already, and gives its charge back. Safe from any goroutine.
func (b *Buffer) fail(cause error) {
	if b.made.Complete(struct{}{}, cause) {
		b.dev.discharge(b)
	}
}

// allocErr is the allocation's error, or nil once it has memory; on the actor thread, where
// the allocation's message has run (or been refused) before any message that uses the buffer.
func (b *Buffer) allocErr() error {
	if !b.made.Ready() {
		err := b.msg.Err()
		if err == nil { // a use sent before the allocation: impossible through the public API
			return errors.New("gpuactor: buffer used before its allocation was queued")
		}
		b.fail(err) // the message was refused without running
	}
	return b.made.Err()
}

// awaitMade waits, off the actor thread, until a stream-ordered allocation has been made or
// has failed, and returns the failure wrapped in ErrAllocFailed, or ctx's error.
func (b *Buffer) awaitMade(ctx context.Context) error {
	if !b.made.Ready() && !b.msg.Ready() {
		var done <-chan struct{}
		if ctx != nil {
			done = ctx.Done()
		}
		select {
		case <-b.made.Done():
		case <-b.msg.Done():
		case <-done:
			if !b.made.Ready() && !b.msg.Ready() {
				return ctx.Err()
			}
		}
	}
	if !b.made.Ready() { // msg completed first: it failed without running op
		b.fail(b.msg.Err())
	}
	if err := b.made.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrAllocFailed, err)
	}
	return nil
}

// Buffer charge states (Buffer.life): counted until the first of its free being queued, its
// free running, or its allocation failing gives the charge back.
const (
	lifeCounted uint32 = iota
	lifeDischarged
)

// discharge gives back b's Charge, once. Safe from any goroutine.
func (d *Device) discharge(b *Buffer) bool {
	if !b.life.CompareAndSwap(lifeCounted, lifeDischarged) {
		return false
	}
	d.Uncharge(b.kind, b.size)
	return true
}

// Discharge gives back b's charge when a domain package has queued b's free in stream order
// (Usage counts a buffer until its free is queued, so that a caller that frees and allocates
// in turn is never refused by a limit that the queued free will make room under). It returns
// nil when this call gave it back, and otherwise why not: the buffer's allocation failed
// (ErrAllocFailed), or a free already queued or run gave it back (ErrFreed). Safe from any
// goroutine.
func (d *Device) Discharge(b *Buffer) error {
	if b == nil {
		return invalid("free of a nil buffer")
	}
	if b.dev != d {
		return wrongDevice("buffer", b.dev, d)
	}
	if d.discharge(b) {
		return nil
	}
	if b.pending && b.made.Ready() {
		if err := b.made.Err(); err != nil {
			return fmt.Errorf("%w: free of a buffer whose allocation failed: %w", ErrAllocFailed, err)
		}
	}
	return freedErr("buffer of %d bytes freed twice", b.size)
}
