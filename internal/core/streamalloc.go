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

// AsyncAlloc is a stream-ordered allocation: its Buffer, and the promise of the message that
// makes the memory, one object, so that queuing an allocation costs one allocation. A face
// holds it inside a value of its own.
type AsyncAlloc struct {
	Buffer
	msg actor.Promise[struct{}]
}

// Future completes when the GPU has passed the allocation, or with why it failed or never ran.
func (a *AsyncAlloc) Future() *actor.Future[struct{}] { return a.msg.Future() }

// AllocAsync counts size bytes against s's device (refusing them with ErrMemoryLimit at
// once), makes a — a zero AsyncAlloc — the buffer of that memory, and queues its allocation on
// s, from pool (nil: the device's current pool), on the actor thread. It returns without
// waiting for the allocation. a's Future completes when the GPU has passed the allocation, or
// with why it failed or never ran; then every later use of the buffer fails with
// ErrAllocFailed wrapping the error, and its charge is given back. The memory goes back to
// its pool in stream order (cudaFreeAsync) when the buffer is freed.
//
// When the message cannot be queued (ctx ended, the device is closed or has failed, the pool
// is of another device or closed), AllocAsync returns the error and nothing is allocated;
// once it is queued, the allocation runs whatever ctx does, and the buffer is the caller's.
func AllocAsync(ctx context.Context, s *Stream, a *AsyncAlloc, size uint64, pool *Pool) error {
	if s == nil {
		return Invalid("allocation on a nil stream")
	}
	b := &a.Buffer
	if b.dev != nil {
		return Invalid("AllocAsync needs a zero AsyncAlloc")
	}
	if size == 0 {
		return Invalid("allocation of 0 bytes")
	}
	d := s.dev
	if pool != nil {
		if pool.dev != d {
			return WrongDevice("pool", pool.dev, d)
		}
		if err := pool.Alive(); err != nil { // checked again on the actor, where Close runs
			return err
		}
	}
	if err := d.Err(); err != nil {
		return err
	}
	if err := d.Charge(KindAsync, size); err != nil {
		return err
	}
	b.dev, b.size, b.kind, b.release, b.pending, b.allocOn, b.allocFrom = d, size, KindAsync, freeAsync, true, s, pool
	b.msg = a.msg.Future()
	if f := actor.CallTask(ctx, d.act, &a.msg, actor.Task[struct{}]((*allocTask)(b))); f != b.msg {
		b.fail(f.Err()) // msg was sent before: refused, nothing queued
		return f.Err()
	}
	// msg failed while ready did not complete: the allocation never ran, so nothing was
	// allocated. (It completes ready before msg whenever it runs, so this order of checks
	// cannot be fooled.)
	if err := b.msg.Err(); err != nil && !b.ready.Future().Ready() {
		b.fail(err)
		return err
	}
	return nil
}

// freeAsync frees a stream-ordered allocation closed without a stream of its own (or left to
// the device's Close), on the device's own stream.
func freeAsync(rt backend.Device, p cuda.DevicePtr, s backend.Stream) error {
	return rt.FreeAsync(p, s)
}

// allocate makes the memory of b on stream h, from its pool; actor thread only.
func (b *Buffer) allocate(rt backend.Device, h backend.Stream, pool *Pool) (cuda.DevicePtr, error) {
	var p cuda.DevicePtr
	var err error
	if pool != nil {
		if err = pool.Alive(); err == nil {
			p, err = rt.MallocFromPoolAsync(b.size, pool.h, h)
		}
	} else {
		p, err = rt.MallocAsync(b.size, h)
	}
	if err != nil {
		return 0, b.allocFailed(err)
	}
	return p, nil
}

// allocFailed is the error of b's allocation failing with err.
func (b *Buffer) allocFailed(err error) error {
	return fmt.Errorf("gpuactor: MallocAsync(%d bytes) on device %d: %w", b.size, b.dev.ordinal, err)
}

// allocTask is the message of AllocAsync: the buffer itself, which holds the allocation to
// run, so that queuing one allocates nothing more.
type allocTask Buffer

func (t *allocTask) Run(p *actor.Promise[struct{}]) (struct{}, error) {
	b := (*Buffer)(t)
	s, pool := b.allocOn, b.allocFrom
	b.allocOn, b.allocFrom = nil, nil // the buffer outlives the allocation; they need not
	ok := false
	defer func() {
		if !ok { // the allocation panicked (the actor recovers and fails msg)
			r := recover()
			b.fail(fmt.Errorf("gpuactor: the allocation did not finish: %v", r))
			if r != nil {
				panic(r)
			}
		}
	}()
	err := s.alive()
	var ptr cuda.DevicePtr
	if err == nil && b.dev.starter != nil {
		err = b.start(s.h, pool, p)
		ok = true
		if err != nil {
			b.fail(err)
			return struct{}{}, err
		}
		return struct{}{}, actor.ErrPending
	}
	if err == nil {
		ptr, err = b.allocate(b.dev.rt, s.h, pool)
	}
	ok = true
	if err != nil {
		b.fail(err)
		return struct{}{}, err
	}
	b.ptr = ptr
	b.dev.live.buffers.add(b)
	b.ready.Complete(struct{}{}, nil) // publishes ptr to DevicePtr
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
	if !b.ready.Future().Ready() && len(b.dev.started) > 0 {
		b.dev.settleAllocs() // its address may be one of those still coming
	}
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
	if !ready.Ready() { // msg completed first: it failed without running the allocation
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
