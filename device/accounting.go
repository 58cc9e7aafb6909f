package device

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// ErrMemoryLimit: an allocation would take the device past the limit set with WithMemoryLimit.
var ErrMemoryLimit = errors.New("gpuactor: device memory limit reached")

// MemKind is a kind of memory gpuactor allocates, as Usage counts it.
type MemKind int

// The kinds of memory counted per device.
const (
	KindDevice     MemKind = iota // cudaMalloc
	KindAsync                     // stream-ordered, from a memory pool
	KindPinned                    // page-locked host memory from cudaHostAlloc
	KindRegistered                // Go memory page-locked with cudaHostRegister
	KindManaged                   // cudaMallocManaged
	numKinds
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
	}
	return fmt.Sprintf("MemKind(%d)", int(k))
}

// limited reports whether the kind lives in device memory, which WithMemoryLimit caps.
func (k MemKind) limited() bool { return k == KindDevice || k == KindAsync || k == KindManaged }

// KindUsage is what gpuactor holds of one kind: bytes and allocations.
type KindUsage struct {
	Bytes uint64
	Count uint64
}

// Usage is what gpuactor has allocated on a device and not yet freed, by kind. Stream-ordered
// allocations count from when they are queued until their free is queued.
type Usage struct {
	Device, Async, Pinned, Registered, Managed KindUsage
	// Limit is the WithMemoryLimit cap on Device+Async+Managed bytes; 0 means none.
	Limit uint64
}

// DeviceBytes is the device memory counted against the limit: Device+Async+Managed.
func (u Usage) DeviceBytes() uint64 { return u.Device.Bytes + u.Async.Bytes + u.Managed.Bytes }

// accounting holds the counters, written and read from any goroutine. held is the sum the
// limit caps (Device+Async+Managed bytes), kept apart so that one compare-and-swap checks a
// request against the limit and counts it: stream-ordered allocations are charged on the
// caller's goroutine, so charges race, and a check then an add would let two of them pass the
// limit together.
type accounting struct {
	limit uint64
	held  atomic.Uint64
	bytes [numKinds]atomic.Uint64
	count [numKinds]atomic.Uint64
}

// WithMemoryLimit caps the device memory (device, stream-ordered and managed allocations)
// gpuactor allocates on each device opened with it, in bytes. A request that would pass it
// fails with ErrMemoryLimit before reaching the runtime. 0 means no limit.
func WithMemoryLimit(bytes uint64) Option { return func(c *config) { c.memLimit = bytes } }

// Usage is what gpuactor has allocated on the device, now. Safe from any goroutine.
func (d *Device) Usage() Usage {
	a := &d.acct
	k := func(kind MemKind) KindUsage {
		return KindUsage{Bytes: a.bytes[kind].Load(), Count: a.count[kind].Load()}
	}
	return Usage{Device: k(KindDevice), Async: k(KindAsync), Pinned: k(KindPinned),
		Registered: k(KindRegistered), Managed: k(KindManaged), Limit: a.limit}
}

// Charge counts an allocation of n bytes of kind before it is made, refusing it with
// ErrMemoryLimit when it would pass the device's limit; undo it with Uncharge when the
// allocation then fails. Safe from any goroutine: the check and the count are one atomic step.
func (d *Device) Charge(kind MemKind, n uint64) error {
	a := &d.acct
	if kind.limited() {
		if a.limit == 0 {
			a.held.Add(n)
		} else {
			for {
				held := a.held.Load()
				if held+n > a.limit || held+n < held {
					return fmt.Errorf("%w: %d bytes of %s memory requested on device %d, which holds %d of its %d-byte limit",
						ErrMemoryLimit, n, kind, d.ordinal, held, a.limit)
				}
				if a.held.CompareAndSwap(held, held+n) {
					break
				}
			}
		}
	}
	a.bytes[kind].Add(n)
	a.count[kind].Add(1)
	return nil
}

// Uncharge takes back a Charge: when the allocation failed or is freed. Safe from any goroutine.
func (d *Device) Uncharge(kind MemKind, n uint64) {
	if kind.limited() {
		d.acct.held.Add(-n)
	}
	d.acct.bytes[kind].Add(-n)
	d.acct.count[kind].Add(^uint64(0))
}
