package collective

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// Blocking communicators (the default). NCCL queues a blocking communicator's operations on
// the calling thread, the device's actor, at NCCL's own speed; but a call that needs its
// peers (a split, a finalize with operations outstanding, the first operation between two
// ranks, which connects them) parks the actor inside NCCL until they take part. The way out
// of a parked call is ncclCommAbort from another thread, which NCCL documents for exactly
// this. So every such call runs inside parked: while it runs, Abort and the end of the
// call's ctx abort the comm from their own goroutine (backend.CollAnyThreadAborter), and the
// actor, back from the aborted call, sees the comm aborted and never touches its handle
// again (NCCL freed it).
//
// callMu orders the actor's entry and exit with an abort from elsewhere: an abort from
// another goroutine happens only while inCall is set, that is strictly between the actor's
// entry and its exit; an Abort that comes while the actor is not inside a call leaves
// abortReq set, so the actor refuses to enter and aborts on its own thread.

// parks is whether c's calls may park the actor and can be aborted from another goroutine:
// blocking, on a backend that aborts from any thread. The simulator never parks; an isolated
// device parks its worker's actor, which only the worker's end frees.
func (c *Comm) parks() bool { return c.blocking && c.anyAbort != nil }

// parked runs call, a blocking NCCL call on c, on the actor thread. When Abort is called or
// ctx ends while call is inside NCCL, c is aborted from another goroutine and parked
// returns an error matching ErrAborted (and ctx's error): the caller must not use c's handle
// again.
func (c *Comm) parked(ctx context.Context, rt backend.Device, call func() error) error {
	if !c.parks() {
		return call()
	}
	seq, ok := c.enter()
	if !ok {
		abortErr := c.abortOnThread(rt)
		return errors.Join(fmt.Errorf("rank %d of %d on device %d: %w", c.rank, c.count, c.dev.Ordinal(), ErrAborted), abortErr)
	}
	stop := func() bool { return false }
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() { _, _ = c.abortElsewhere(false, seq) })
	}
	err := call()
	stop()
	if c.leave() {
		return errors.Join(fmt.Errorf("rank %d of %d on device %d: %w while NCCL waited for its peers", c.rank, c.count, c.dev.Ordinal(), ErrAborted), context.Cause(ctx), err)
	}
	return err
}

// enter marks the actor inside a blocking call on c, numbered seq; false when c is aborted
// or Abort was called, and the call must not be made.
func (c *Comm) enter() (seq uint64, ok bool) {
	c.callMu.Lock()
	defer c.callMu.Unlock()
	if c.abortReq.Load() || c.state.Load() == stAborted {
		return 0, false
	}
	c.inCall = true
	c.callSeq++
	c.callAt = time.Now()
	return c.callSeq, true
}

// leave marks the actor back from the call; true when c was aborted meanwhile.
func (c *Comm) leave() bool {
	c.callMu.Lock()
	defer c.callMu.Unlock()
	c.inCall = false
	return c.state.Load() == stAborted
}

// abortElsewhere aborts c from the calling goroutine when the actor is inside a blocking
// call on it (call number seq, or any call for seq 0), and reports whether c is now aborted
// (by this call or before). Otherwise it leaves c alone, after recording the request when
// request is set (Abort), so that the actor aborts c rather than enter a call. A ctx
// watcher passes its call's number: a watcher that fires late must not abort a later call.
//
// The actor marks a call before making it, so a call younger than entryGrace may not have
// reached NCCL yet, and an abort from here would free the comm under it: abortElsewhere
// waits until the call is that old, and leaves c to the actor if it returns first.
func (c *Comm) abortElsewhere(request bool, seq uint64) (bool, error) {
	if !c.parks() {
		return false, nil
	}
	if request {
		c.abortReq.Store(true) // no call enters from here on
	}
	c.callMu.Lock()
	for {
		if !c.inCall || (seq != 0 && seq != c.callSeq) {
			c.callMu.Unlock()
			return false, nil
		}
		wait := entryGrace - time.Since(c.callAt)
		if wait <= 0 {
			break
		}
		seq = c.callSeq // from here on, this call only
		c.callMu.Unlock()
		time.Sleep(wait)
		c.callMu.Lock()
	}
	for {
		st := c.state.Load()
		if st == stClosed || st == stAborted {
			c.callMu.Unlock()
			return true, nil
		}
		if c.state.CompareAndSwap(st, stAborted) {
			break
		}
	}
	c.abortReq.Store(true)
	c.callMu.Unlock()
	c.aborts.Add(1)
	return true, c.anyAbort.CollCommAbortAnyThread(c.h)
}

// entryGrace is how long a blocking call must have been under way before it is aborted from
// another goroutine: far longer than the actor takes from marking the call to making it,
// even on a loaded machine, and short next to a wait for peers that are not coming.
const entryGrace = 20 * time.Millisecond
