package core

import (
	"context"
	"errors"
	"fmt"
	"runtime/trace"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// Staging memory: the pinned buffers that copies of Go slices pass through. One pool per
// device, shared by every stream, so that what a device pins for staging is bounded however
// many streams copy at once: a copy borrows slots for as long as the GPU uses them and waits
// for one to come back when the pool is at its limit, rather than pinning more.
const (
	// StagingSlotSize is a staging slot's size in bytes.
	StagingSlotSize = 4 << 20
	// StagingSmallSize is the size of a small slot: a copy of at most this many bytes takes
	// one of these, carved from a slot, rather than a whole slot, so that many small copies
	// at once pin little (64 of them share one slot).
	StagingSmallSize = 64 << 10
	smallPerSlot     = StagingSlotSize / StagingSmallSize
	// DefaultStagingLimit is how much a device pins for staging unless configured otherwise:
	// 64 slots, enough for the widest copy (one slot per copying goroutine, plus those queued
	// for the link) several times over.
	DefaultStagingLimit = 256 << 20
)

// Staging is a device's pool of pinned staging slots. Slots are pinned on demand, up to the
// limit, and kept until the device closes. Safe for concurrent use.
type Staging struct {
	d     *Device
	limit int // slots

	mu      sync.Mutex
	idle    []unsafe.Pointer
	all     []unsafe.Pointer // every slot pinned, idle or lent
	pinning int              // slots being pinned (counted against limit)
	lent    int
	waiters []chan struct{} // copies waiting for a slot, oldest first

	// Small slots: carved from whole slots of the pool, which go back to whole once all their
	// small slots are idle and a copy waits for a whole slot.
	smallIdle    []unsafe.Pointer
	small        map[unsafe.Pointer]unsafe.Pointer // every small slot: the slot it was cut from
	carved       map[unsafe.Pointer]int            // every carved slot: its small slots lent
	smallLent    int
	smallWaiters []chan struct{}
	smallPinning bool // a slot is being pinned to carve
	closed       bool
	pending      map[any]func() // run on release before the memory goes (Pending)

	// memMu keeps release from freeing slots under a host-side copy: copies into and out of
	// slots hold it for reading (Use) and are refused once freed; release takes it for
	// writing.
	memMu sync.RWMutex
	freed bool

	// Stats' view, published under mu at every change, read without it.
	waits                atomic.Uint64
	nPinned, nLent, nWai atomic.Int64
	nSmallLent           atomic.Int64
}

// StagingStats is a snapshot of a device's staging pool.
type StagingStats struct {
	PinnedBytes uint64 // pinned for staging so far, idle or lent
	InUseBytes  uint64 // lent to copies in progress
	LimitBytes  uint64
	Waits       uint64 // times a copy waited for a slot to come back
	Waiting     int    // copies waiting now
}

// StagingLimitSlots is how many slots a limit of bytes allows: at least one.
func StagingLimitSlots(bytes uint64) int {
	return int(max(1, min(bytes/StagingSlotSize, 1<<20)))
}

func newStaging(d *Device, limit uint64) *Staging {
	if limit == 0 {
		limit = DefaultStagingLimit
	}
	return &Staging{d: d, limit: StagingLimitSlots(limit), pending: map[any]func(){},
		small: map[unsafe.Pointer]unsafe.Pointer{}, carved: map[unsafe.Pointer]int{}}
}

// Staging is the device's staging pool.
func (d *Device) Staging() *Staging { return d.staging }

// Stats is a snapshot of the pool, read without its lock.
func (st *Staging) Stats() StagingStats {
	return StagingStats{
		PinnedBytes: uint64(st.nPinned.Load()) * StagingSlotSize,
		InUseBytes:  uint64(max(0, st.nLent.Load()))*StagingSlotSize + uint64(max(0, st.nSmallLent.Load()))*StagingSmallSize,
		LimitBytes:  uint64(st.limit) * StagingSlotSize,
		Waits:       st.waits.Load(),
		Waiting:     int(st.nWai.Load()),
	}
}

// publishLocked updates Stats' view; under mu, after every change.
func (st *Staging) publishLocked() {
	st.nPinned.Store(int64(len(st.all)))
	st.nLent.Store(int64(st.lent))
	st.nWai.Store(int64(len(st.waiters) + len(st.smallWaiters)))
	st.nSmallLent.Store(int64(st.smallLent))
}

// Acquire lends up to want slots (at least one): idle ones first, then newly pinned ones while
// the pool is under its limit. With none to lend it waits, oldest waiter first, until a slot
// comes back or ctx ends. A copy that holds slots never waits for more, so copies cannot
// deadlock over slots. The slots go back with Release.
func (st *Staging) Acquire(ctx context.Context, want int) ([]unsafe.Pointer, error) {
	want = max(want, 1)
	waited, canPin := false, true
	for {
		st.mu.Lock()
		if err := st.refuseIfClosedLocked(); err != nil {
			return nil, err
		}
		if len(st.idle) < want && len(st.all)+st.pinning >= st.limit {
			st.uncarveIdleLocked(want - len(st.idle))
		}
		n := min(want, len(st.idle))
		got := slices.Clone(st.idle[len(st.idle)-n:])
		st.idle = st.idle[:len(st.idle)-n]
		pin := 0
		if n < want && canPin {
			// Slots being pinned join all before pinning forgets them: counted twice for a
			// moment, which can only hold pinning back.
			pin = max(0, min(want-n, st.limit-len(st.all)-st.pinning))
		}
		st.pinning += pin
		st.lent += n + pin
		st.publishLocked()
		st.mu.Unlock()
		if pin > 0 {
			pinned, err := st.pin(ctx, pin)
			st.mu.Lock()
			st.pinning -= pin
			st.lent -= pin - len(pinned)
			if len(pinned) < pin {
				st.signalLocked(1) // a waiter that counted on these slots looks again
			}
			others := len(st.all) > 0 || st.pinning > 0 // lent slots come back
			st.publishLocked()
			st.mu.Unlock()
			got = append(got, pinned...)
			if len(got) == 0 {
				if !others || ctx.Err() != nil {
					return nil, err
				}
				canPin = false // pinning fails (memory, the device's limit): wait for a slot
			}
		}
		if len(got) > 0 {
			return got, nil
		}
		if !waited {
			st.waits.Add(1)
			waited = true
		}
		if err := st.wait(ctx, canPin, false); err != nil {
			return nil, err
		}
	}
}

// wait parks until Release or release signals, or ctx ends.
func (st *Staging) wait(ctx context.Context, canPin, small bool) error {
	st.mu.Lock()
	pinnable := canPin && len(st.all)+st.pinning < st.limit && !(small && st.smallPinning)
	if st.closed || len(st.idle) > 0 || pinnable || (small && len(st.smallIdle) > 0) {
		st.publishLocked()
		st.mu.Unlock()
		return nil // changed since the caller looked: look again
	}
	ch := make(chan struct{}, 1)
	queue := &st.waiters
	if small {
		queue = &st.smallWaiters
	}
	*queue = append(*queue, ch)
	st.publishLocked()
	st.mu.Unlock()
	defer trace.StartRegion(ctx, "gpuactor.staging.wait").End()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		st.mu.Lock()
		if i := slices.Index(*queue, ch); i >= 0 {
			*queue = slices.Delete(*queue, i, i+1)
		} else if small { // signalled as ctx ended: pass the turn on
			st.signalSmallLocked(1)
		} else {
			st.signalLocked(1)
		}
		st.publishLocked()
		st.mu.Unlock()
		return ctx.Err()
	}
}

// signalLocked wakes up to n copies waiting for a slot, oldest first; with none waiting, a
// copy waiting for a small slot (which can carve one).
func (st *Staging) signalLocked(n int) {
	for ; n > 0 && len(st.waiters) > 0; n-- {
		st.waiters[0] <- struct{}{}
		st.waiters = st.waiters[1:]
	}
	st.signalSmallLocked(n)
}

// signalSmallLocked wakes up to n copies waiting for a small slot, oldest first.
func (st *Staging) signalSmallLocked(n int) {
	for ; n > 0 && len(st.smallWaiters) > 0; n-- {
		st.smallWaiters[0] <- struct{}{}
		st.smallWaiters = st.smallWaiters[1:]
	}
}

// Release gives slots and small slots back once the GPU and the host are done with them.
// Safe from any goroutine, the actor thread included.
func (st *Staging) Release(slots ...unsafe.Pointer) {
	if len(slots) == 0 {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	defer st.publishLocked()
	for _, p := range slots {
		if base, ok := st.small[p]; ok {
			st.smallLent--
			st.carved[base]--
			if !st.reusable() {
				continue
			}
			st.smallIdle = append(st.smallIdle, p)
			if st.carved[base] == 0 && len(st.waiters) > 0 && len(st.idle) == 0 {
				st.uncarveLocked(base) // a copy waits for a whole slot: make this one whole again
				st.signalLocked(1)
				continue
			}
			st.signalSmallLocked(1)
			continue
		}
		st.lent--
		if st.reusable() {
			st.idle = append(st.idle, p)
			st.signalLocked(1)
		}
	}
}

// refuseIfClosedLocked unlocks mu and returns ErrClosed once the device closed, or a
// Shutdown's deadline passed; nil, still locked, while it is open.
func (st *Staging) refuseIfClosedLocked() error {
	if st.reusable() {
		return nil
	}
	closed := st.closed
	st.publishLocked()
	st.mu.Unlock()
	if !closed {
		return st.d.shutdownErr()
	}
	return Closed("device %d closed: no staging memory", st.d.ordinal)
}

// reusable reports whether slots may be lent again: not once the device closed, nor once a
// Shutdown's deadline passed, which fails copies whose DMA may still read or write their slots.
// Under mu.
func (st *Staging) reusable() bool { return !st.closed && !st.d.aborting.Load() }

// AcquireSmall lends a small slot (StagingSmallSize bytes): an idle one, else one of the
// pieces of a slot it carves, which it takes as Acquire would (idle, newly pinned, or waited
// for until ctx ends). The small slot goes back with Release.
func (st *Staging) AcquireSmall(ctx context.Context) (unsafe.Pointer, error) {
	waited, canPin := false, true
	for {
		st.mu.Lock()
		if err := st.refuseIfClosedLocked(); err != nil {
			return nil, err
		}
		if n := len(st.idle); len(st.smallIdle) == 0 && n > 0 {
			st.carveLocked(st.idle[n-1])
			st.idle = st.idle[:n-1]
		}
		if n := len(st.smallIdle); n > 0 {
			p := st.smallIdle[n-1]
			st.smallIdle = st.smallIdle[:n-1]
			st.smallLent++
			st.carved[st.small[p]]++
			st.publishLocked()
			st.mu.Unlock()
			return p, nil
		}
		// One slot pinned for small copies at a time: 64 copies arriving together share it
		// rather than pinning one each.
		pin := canPin && !st.smallPinning && len(st.all)+st.pinning < st.limit
		if pin {
			st.pinning++
			st.smallPinning = true
		}
		st.mu.Unlock()
		if pin {
			pinned, err := st.pin(ctx, 1)
			st.mu.Lock()
			st.pinning--
			st.smallPinning = false
			if len(pinned) == 1 && st.closed {
				st.mu.Unlock()
				continue // the device closed, and freed the slot: refused above
			}
			if len(pinned) == 1 {
				st.carveLocked(pinned[0])
				st.signalSmallLocked(smallPerSlot)
				st.mu.Unlock()
				continue
			}
			st.signalLocked(1) // a waiter that counted on this slot looks again
			st.signalSmallLocked(1)
			others := len(st.all) > 0 || st.pinning > 0
			st.publishLocked()
			st.mu.Unlock()
			if !others || ctx.Err() != nil {
				return nil, err
			}
			canPin = false // pinning fails: wait for a slot to come back
		}
		if !waited {
			st.waits.Add(1)
			waited = true
		}
		if err := st.wait(ctx, canPin, true); err != nil {
			return nil, err
		}
	}
}

// carveLocked cuts slot p, which nobody holds, into small slots, idle.
func (st *Staging) carveLocked(p unsafe.Pointer) {
	st.carved[p] = 0
	for i := range smallPerSlot {
		q := unsafe.Add(p, i*StagingSmallSize)
		st.small[q] = p
		st.smallIdle = append(st.smallIdle, q)
	}
}

// uncarveLocked makes carved slot base, none of whose small slots is lent, whole and idle.
func (st *Staging) uncarveLocked(base unsafe.Pointer) {
	st.smallIdle = slices.DeleteFunc(st.smallIdle, func(q unsafe.Pointer) bool { return st.small[q] == base })
	for i := range smallPerSlot {
		delete(st.small, unsafe.Add(base, i*StagingSmallSize))
	}
	delete(st.carved, base)
	st.idle = append(st.idle, base)
}

// uncarveIdleLocked makes whole again up to n carved slots none of whose small slots is lent,
// for a copy that wants whole slots and finds none idle.
func (st *Staging) uncarveIdleLocked(n int) {
	for base, lent := range st.carved {
		if n <= 0 {
			return
		}
		if lent == 0 {
			st.uncarveLocked(base)
			n--
		}
	}
}

// pin pins up to n slots on the actor thread, charged as pinned memory, and adds them to the
// pool's slots there: a device closing right after frees them with the rest, though the
// caller has not taken them yet. It returns those it pinned with the error that stopped it,
// if any.
func (st *Staging) pin(ctx context.Context, n int) ([]unsafe.Pointer, error) {
	d := st.d
	return Make(ctx, d, func(rt backend.Device, _ *Tracker) ([]unsafe.Pointer, error) {
		var ps []unsafe.Pointer
		var err error
		for range n {
			if err = d.Charge(KindPinned, StagingSlotSize); err != nil {
				break
			}
			p, herr := rt.HostAlloc(StagingSlotSize, backend.HostAllocDefault)
			if herr != nil {
				d.Refund(KindPinned, StagingSlotSize)
				err = fmt.Errorf("gpuactor: pinning a %d-byte staging slot: %w", StagingSlotSize, herr)
				break
			}
			ps = append(ps, p)
		}
		st.mu.Lock()
		st.all = append(st.all, ps...)
		st.mu.Unlock()
		return ps, nilIfSome(ps, err)
	}, func(rt backend.Device, _ *Tracker, ps []unsafe.Pointer) { // the caller left: unpin them
		st.mu.Lock()
		st.all = slices.DeleteFunc(st.all, func(p unsafe.Pointer) bool { return slices.Contains(ps, p) })
		st.mu.Unlock()
		for _, p := range ps {
			_ = rt.HostFree(p)
			d.Refund(KindPinned, StagingSlotSize)
		}
	})
}

// nilIfSome keeps the slots pinned before err: a copy can go on with fewer.
func nilIfSome(ps []unsafe.Pointer, err error) error {
	if len(ps) > 0 {
		return nil
	}
	return err
}

// Use runs fn, a host-side copy into or out of lent slots, unless the pool's memory was freed
// (the device closed), which it reports as ErrClosed.
func (st *Staging) Use(fn func()) error {
	st.memMu.RLock()
	defer st.memMu.RUnlock()
	if st.freed {
		return Closed("device %d closed during a staged copy", st.d.ordinal)
	}
	fn()
	return nil
}

// Pending registers fn to run on the actor thread when the device closes, before the slots
// are freed, unless Done(key) came first: a download chunk's copy out of its slot, so that
// what the GPU delivered reaches the caller even when the device closes under the copy.
func (st *Staging) Pending(key any, fn func()) {
	st.mu.Lock()
	st.pending[key] = fn
	st.mu.Unlock()
}

// Done drops key's Pending function.
func (st *Staging) Done(key any) {
	st.mu.Lock()
	delete(st.pending, key)
	st.mu.Unlock()
}

// abandon closes the pool without freeing its slots, which a stuck GPU may still be using:
// copies waiting for a slot get ErrClosed, and copies into or out of lent slots stop.
func (st *Staging) abandon() {
	st.mu.Lock()
	st.closed = true
	clear(st.pending)
	st.signalLocked(len(st.waiters))
	st.signalSmallLocked(len(st.smallWaiters))
	st.all, st.idle, st.smallIdle = nil, nil, nil
	st.publishLocked()
	st.mu.Unlock()
	st.memMu.Lock()
	st.freed = true
	st.memMu.Unlock()
}

// release runs the pending copy-outs, then frees every slot: on the actor thread when the
// device closes, after its streams have settled. Copies waiting for a slot get ErrClosed.
func (st *Staging) release(rt backend.Device) error {
	st.mu.Lock()
	st.closed = true
	fns := make([]func(), 0, len(st.pending))
	for _, fn := range st.pending {
		fns = append(fns, fn)
	}
	clear(st.pending)
	st.signalLocked(len(st.waiters))
	st.signalSmallLocked(len(st.smallWaiters))
	st.publishLocked()
	st.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
	st.memMu.Lock()
	st.freed = true
	st.memMu.Unlock()
	st.mu.Lock()
	all := st.all
	st.all, st.idle, st.smallIdle = nil, nil, nil
	st.publishLocked()
	st.mu.Unlock()
	var errs []error
	for _, p := range all {
		errs = append(errs, rt.HostFree(p))
		st.d.Refund(KindPinned, StagingSlotSize)
	}
	return errors.Join(errs...)
}
