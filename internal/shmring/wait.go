//go:build linux && (amd64 || arm64)

package shmring

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/gpuactor/gpuactor/internal/spin"
)

// wait returns nil once ready reports true, ErrClosed once the ring is closed while not ready,
// or ctx's error while it waits. It spins first, then sleeps on seq, counted in sleepers so
// the other side knows to wake it (see the package comment for why no wake is lost). ready
// reads the other side's counter; it is called after sleepers is raised, and the other side
// loads sleepers after publishing, both as sequentially consistent atomics.
func (r *Ring) wait(ctx context.Context, ready func() bool, seq, sleepers *atomic.Uint32) error {
	if r.spinFor(ready) {
		return nil
	}
	var stop func() bool
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	for {
		if ready() {
			return nil
		}
		if r.sh.closed.Load() != 0 {
			return ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if stop == nil && ctx.Done() != nil {
			// Wake at once on cancellation rather than at the end of a sleep slice. The
			// callback may run after this call has returned, even after Close: it touches the
			// mapping only if it can show that Close has not started unmapping it.
			stop = context.AfterFunc(ctx, func() {
				if r.mu.TryRLock() {
					if !r.unmapped {
						kick(seq)
					}
					r.mu.RUnlock()
				}
			})
		}
		d := r.slice
		if dl, ok := ctx.Deadline(); ok {
			left := time.Until(dl)
			if left <= 0 {
				// The context's own timer may fire later than its deadline on a busy machine.
				return context.DeadlineExceeded
			}
			d = min(d, left)
		}
		v := seq.Load()
		sleepers.Add(1)
		if !ready() && r.sh.closed.Load() == 0 {
			futexSleep(seq, v, d)
		}
		sleepers.Add(^uint32(0))
	}
}

// spinFor polls ready for the spin window and reports whether it turned true. A poll is one
// atomic load of the other side's counter; every 64 polls it reads the clock and yields. The
// yield matters more than it costs: a goroutine this one just woke (the caller a reply is
// for, say) waits in this P's run-next slot, which other Ps do not steal at once, so a spin
// that never yields would hold it up for the whole window. A ring set not to yield (SetYield)
// only reads the clock.
func (r *Ring) spinFor(ready func() bool) bool {
	window := time.Duration(r.spin.Load())
	if window <= 0 || !multiCPU {
		return false
	}
	// A spinner holds its P: it spins only with a token of the process's spin budget, which
	// leaves a P to spare for the goroutines it waits on, and sleeps at once without one.
	if !spin.Acquire() {
		return false
	}
	defer spin.Release()
	yield := !r.solo.Load()
	var idle func() bool
	if p := r.idle.Load(); p != nil {
		idle = *p
	}
	start := time.Now()
	for {
		for range 64 {
			if ready() {
				return true
			}
		}
		// Work in hand keeps the spin going without a look at the clock: a receiver
		// descheduled between idle's answer and that look must not take the delay for an
		// idle window and go to sleep while idle still has work.
		busy := idle != nil && idle()
		if r.sh.closed.Load() != 0 {
			return false
		}
		if busy {
			start = time.Now()
		} else if time.Since(start) >= window {
			return false
		}
		if yield {
			runtime.Gosched()
		}
	}
}

// takeTurn waits for this process's turn on one side of the ring (turn is sendTurn or
// recvTurn), honouring ctx while another goroutine holds it.
func takeTurn(ctx context.Context, turn chan struct{}) error {
	select {
	case turn <- struct{}{}:
		return nil
	default:
	}
	select {
	case turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
