package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// A stream-ordered allocation returns its Buffer before the device has made the memory, so that
// queuing one costs the caller no round trip to the actor (a park and wake that dwarfs
// cudaMallocAsync itself). That is safe because every use of a buffer reaches the memory on the
// actor thread, in a message sent after the one that allocates it: the mailbox runs messages in
// the order they were sent, so by then the address is known, or the failure.

// Allocator makes the memory of a stream-ordered allocation on the stream whose handle it is
// given, on the actor thread, and returns its address.
type Allocator interface {
	Allocate(rt backend.Device, h backend.Stream) (cuda.DevicePtr, error)
}

// AllocAsync counts size bytes of kind against s's device (refusing them with ErrMemoryLimit
// at once), makes b — a zero Buffer, which the caller may hold inside a value of its own to
// save an allocation — the buffer of that memory, and queues op on s, which makes the memory
// on the actor thread. It returns without waiting for op. msg must be a fresh promise, the
// message's: its future completes when the GPU has passed the allocation, or with why op
// failed or never ran; then every later use of b fails with ErrAllocFailed wrapping the error,
// and its charge is given back. release frees the memory when b is closed without a stream of
// its own or left to the device's Close (see Buffer.release).
//
// When the message cannot be queued (ctx ended, the device is closed or has failed),
// AllocAsync returns the error and nothing is allocated; once it is queued, the allocation
// runs whatever ctx does, and b is the caller's.
func AllocAsync(ctx context.Context, s *Stream, b *Buffer, size uint64, kind MemKind, msg *actor.Promise[struct{}],
	release func(rt backend.Device, p cuda.DevicePtr, s backend.Stream) error, op Allocator) error {
	if s == nil {
		return Invalid("allocation on a nil stream")
	}
	if b == nil || b.dev != nil {
		return Invalid("AllocAsync needs a zero Buffer")
	}
	if size == 0 {
		return Invalid("allocation of 0 bytes")
	}
	d := s.dev
	if err := d.Err(); err != nil {
		return err
	}
	if err := d.Charge(kind, size); err != nil {
		return err
	}
	b.dev, b.size, b.kind, b.release, b.pending, b.alloc, b.allocOn = d, size, kind, release, true, op, s
	b.msg = msg.Future()
	if f := actor.CallTask(ctx, d.act, msg, actor.Task[struct{}]((*allocTask)(b))); f != b.msg {
		b.fail(f.Err()) // msg was sent before: refused, nothing queued
		return f.Err()
	}
	// msg failed while ready did not complete: op never ran, so nothing was allocated. (op
	// completes ready before msg whenever it runs, so this order of checks cannot be fooled.)
	if err := b.msg.Err(); err != nil && !b.ready.Future().Ready() {
		b.fail(err)
		return err
	}
	return nil
}

// allocTask is the message of AllocAsync: the buffer itself, which holds the allocation to
// run, so that queuing one allocates nothing more.
type allocTask Buffer

func (t *allocTask) Run(p *actor.Promise[struct{}]) (struct{}, error) {
	b := (*Buffer)(t)
	op, s := b.alloc, b.allocOn
	b.alloc, b.allocOn = nil, nil // the buffer outlives the allocation; what op captured need not
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
	err := s.alive()
	var ptr cuda.DevicePtr
	if err == nil {
		ptr, err = op.Allocate(b.dev.rt, s.h)
	}
	ok = true
	if err != nil {
		b.fail(err)
		return struct{}{}, err
	}
	b.ptr = ptr
	b.dev.live.buffers.add(b)
	b.ready.Complete(struct{}{}, nil) // publishes ptr to Ptr
	b.dev.tracker.AfterPromise(s.h, p)
	return struct{}{}, actor.ErrPending
}

// Refused gives the charge back when the allocation's message will never run: the device
// refused it (a shutdown's deadline passed) or stopped before it.
func (t *allocTask) Refused(err error) { (*Buffer)(t).fail(err) }

// fail settles a stream-ordered allocation as failed with cause, unless it was settled
// already, and gives its charge back. Safe from any goroutine.
func (b *Buffer) fail(cause error) {
	if b.ready.Complete(struct{}{}, cause) {
		b.RefundOnce()
	}
}

// allocErr is the allocation's error, or nil once it has memory; on the actor thread, where
// the allocation's message has run (or been refused) before any message that uses the buffer.
func (b *Buffer) allocErr() error {
	if !b.ready.Future().Ready() {
		err := b.msg.Err()
		if err == nil { // a use sent before the allocation: impossible through the public API
			return errors.New("gpuactor: buffer used before its allocation was queued")
		}
		b.fail(err) // the message was refused without running
	}
	return b.ready.Future().Err()
}

// awaitReady waits, off the actor thread, until a stream-ordered allocation has been made or
// has failed, and returns the failure wrapped in ErrAllocFailed, or ctx's error.
func (b *Buffer) awaitReady(ctx context.Context) error {
	ready := b.ready.Future()
	if !ready.Ready() && !b.msg.Ready() {
		select {
		case <-ready.Done():
		case <-b.msg.Done():
		case <-ctx.Done():
			if !ready.Ready() && !b.msg.Ready() {
				return ctx.Err()
			}
		}
	}
	if !ready.Ready() { // msg completed first: it failed without running op
		b.fail(b.msg.Err())
	}
	if err := ready.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrAllocFailed, err)
	}
	return nil
}

// AllocErr is why b's stream-ordered allocation failed, once it is known to have (an
// ErrAllocFailed error); nil while it is pending or once it succeeded. Safe from any
// goroutine.
func (b *Buffer) AllocErr() error {
	if !b.pending {
		return nil
	}
	if ready := b.ready.Future(); ready.Ready() {
		if err := ready.Err(); err != nil {
			return fmt.Errorf("%w: %w", ErrAllocFailed, err)
		}
	}
	return nil
}
