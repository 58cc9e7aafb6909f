package core

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// MemKind is a kind of memory gpuactor allocates, as the device's usage counts it.
type MemKind int

// The kinds of memory counted per device.
const (
	KindDevice     MemKind = iota // cudaMalloc
	KindAsync                     // stream-ordered, from a memory pool
	KindPinned                    // page-locked host memory from cudaHostAlloc
	KindRegistered                // Go memory page-locked with cudaHostRegister
	KindManaged                   // cudaMallocManaged
	KindImported                  // another process's memory mapped here (package interop): not limited
	NumKinds
)

// String names the kind.
func (k MemKind) String() string {
	switch k {
	case KindDevice:
		return "device"
	case KindAsync:
		return "async"
	case KindPinned:
		return "pinned"
	case KindRegistered:
		return "registered"
	case KindManaged:
		return "managed"
	case KindImported:
		return "imported"
	}
	return fmt.Sprintf("MemKind(%d)", int(k))
}

// limited reports whether the kind lives in device memory, which the memory limit caps.
func (k MemKind) limited() bool { return k == KindDevice || k == KindAsync || k == KindManaged }

// KindUsage is what gpuactor holds of one kind: bytes and allocations.
type KindUsage struct {
	Bytes, Count uint64
}

// accounting holds the counters, written from any goroutine (stream-ordered allocations are
// charged and given back on the caller's) and read by Usage without a lock. held is the sum the
// limit caps (device, async and managed bytes). Writers take mu, so that checking a request
// against the limit and counting it are one step, and bump seq to odd before they change the
// counters and to even after: Usage reads them between two equal even values of seq, so it
// never sees a refund of one kind half done beside a charge of another, a reading that could
// show more than the limit.
type accounting struct {
	limit uint64
	mu    sync.Mutex
	seq   atomic.Uint64
	held  atomic.Uint64
	bytes [NumKinds]atomic.Uint64
	count [NumKinds]atomic.Uint64
}

// Usage is what gpuactor holds on the device now, by kind, and the memory limit (0: none):
// one reading, taken without a lock, in which the limited kinds never add up past the limit.
func (d *Device) Usage() (by [NumKinds]KindUsage, limit uint64) {
	a := &d.acct
	for {
		seq := a.seq.Load()
		if seq&1 == 0 {
			for k := range by {
				by[k] = KindUsage{Bytes: a.bytes[k].Load(), Count: a.count[k].Load()}
			}
			if a.seq.Load() == seq {
				return by, a.limit
			}
		}
		runtime.Gosched() // a writer is between its two steps: let it finish
	}
}

// write runs fn, which changes the counters, as one step that Usage sees whole.
func (a *accounting) write(fn func()) {
	a.mu.Lock()
	a.seq.Add(1)
	fn()
	a.seq.Add(1)
	a.mu.Unlock()
}

// Charge counts an allocation of n bytes of kind before it is made, refusing it with
// ErrMemoryLimit when it would pass the device's limit; undo it with Refund when the
// allocation then fails. Safe from any goroutine: the check and the count are one step.
func (d *Device) Charge(kind MemKind, n uint64) error {
	a := &d.acct
	var err error
	a.write(func() {
		if kind.limited() {
			held := a.held.Load()
			if a.limit != 0 && (held+n > a.limit || held+n < held) {
				err = fmt.Errorf("%w: %d bytes of %s memory requested on device %d, which holds %d of its %d-byte limit",
					ErrMemoryLimit, n, kind, d.ordinal, held, a.limit)
				return
			}
			a.held.Store(held + n)
		}
		a.bytes[kind].Add(n)
		a.count[kind].Add(1)
	})
	return err
}

// Refund takes back a Charge: when the allocation failed or is freed. Safe from any goroutine.
func (d *Device) Refund(kind MemKind, n uint64) {
	a := &d.acct
	a.write(func() {
		if kind.limited() {
			a.held.Add(-n)
		}
		a.bytes[kind].Add(-n)
		a.count[kind].Add(^uint64(0))
	})
}

// Buffer charge states (Buffer.life): counted until the first of its free being queued, its
// free running, or its allocation failing gives the charge back.
const (
	lifeCounted uint32 = iota
	lifeRefunded
)

// RefundOnce gives back b's charge, once, and reports whether this call did. Safe from any
// goroutine.
func (b *Buffer) RefundOnce() bool {
	if !b.life.CompareAndSwap(lifeCounted, lifeRefunded) {
		return false
	}
	b.dev.Refund(b.kind, b.size)
	return true
}

// RefundFree gives back b's charge when a public package has queued b's free in stream order
// (usage counts a buffer until its free is queued, so that a caller that frees and allocates in
// turn is never refused by a limit that the queued free will make room under). It returns nil
// when this call gave it back, and otherwise why not: the buffer's allocation failed
// (ErrAllocFailed), or a free already queued or run gave it back (ErrClosed). Safe from any
// goroutine.
func (b *Buffer) RefundFree() error {
	if b.RefundOnce() {
		return nil
	}
	if ready := b.ready.Future(); b.pending && ready.Ready() {
		if err := ready.Err(); err != nil {
			return fmt.Errorf("%w: free of a buffer whose allocation failed: %w", ErrAllocFailed, err)
		}
	}
	return Closed("buffer of %d bytes closed twice", b.size)
}

// forgetAll zeroes every counter: a stuck device's release, which frees nothing.
func (a *accounting) forgetAll() {
	a.write(func() {
		a.held.Store(0)
		for k := range NumKinds {
			a.bytes[k].Store(0)
			a.count[k].Store(0)
		}
	})
}
