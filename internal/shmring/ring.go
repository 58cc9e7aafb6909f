//go:build linux && (amd64 || arm64)

package shmring

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultSpin is how long a Send or Recv that must wait polls the other side's counter before
// sleeping on a futex: as long as the in-process actor spins (actor.DefaultSpin), because
// waking a sleeping thread costs more than the round trip it waits for.
const DefaultSpin = 50 * time.Microsecond

// sleepSlice bounds every futex sleep, so that a waiter looks again at its context, the closed
// flag and the ring even if nobody wakes it (a peer that died between registering a wake and
// making it).
const sleepSlice = 4 * time.Millisecond

// Ring is one direction of a channel in shared memory: one producer process, one consumer.
// The process that makes it with New passes File to the other, which maps it with Open; then
// one of them only calls Send and the other only Recv. Within a process, concurrent Sends (and
// concurrent Recvs) are safe: they take turns.
type Ring struct {
	mem  []byte // the whole mapping: header page, then data
	data []byte // mem[headerSize:]
	size uint64 // len(data), a power of two
	mask uint64
	sh   shared
	file *os.File

	spin  atomic.Int64                // spin window in nanoseconds: see SetSpin
	solo  atomic.Bool                 // spin without yielding: see SetYield
	idle  atomic.Pointer[func() bool] // SetIdle
	slice time.Duration               // the longest futex sleep: sleepSlice (tests lengthen it)

	// mu is held shared by every call that touches the mapping and exclusively by Close while
	// it unmaps, so no goroutine of this process touches unmapped memory. Close marks the ring
	// closed and wakes every waiter before taking it, so the wait is short.
	mu       sync.RWMutex
	unmapped bool // under mu
	closeMu  sync.Mutex
	closeErr error
	closing  bool // under closeMu

	// Turns for Send and for Recv within this process: one-slot semaphores rather than
	// mutexes so a goroutine waiting for its turn still honours its context.
	sendTurn, recvTurn chan struct{}
	headSeen           uint64 // the producer's last look at head (under sendTurn)
	tailSeen           uint64 // the consumer's last look at tail (under recvTurn)
}

// New makes a ring whose data area holds size bytes (rounded up to a power of two, at least
// MinSize, at most MaxSize), in a memfd; File is what to pass to the other process (over a Unix
// socket or exec.Cmd.ExtraFiles), which maps it with Open.
func New(size int) (*Ring, error) {
	if size < 0 || size > MaxSize {
		return nil, fmt.Errorf("shmring: ring size %d out of range [0, %d]", size, MaxSize)
	}
	n := dataSize(size)
	f, err := Memfd("gpuactor-shmring", int64(headerSize+n))
	if err != nil {
		return nil, err
	}
	r, err := mapRing(f, headerSize+n)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	// The creator writes the header before anyone else can map the file.
	r.sh.size.Store(n)
	r.sh.version.Store(version)
	r.sh.magic.Store(magic)
	return r, nil
}

// Open maps a ring made by New, in this or another process, from its memfd. It duplicates f,
// so the caller still owns f and may close it at once.
func Open(f *os.File) (*Ring, error) {
	if f == nil {
		return nil, fmt.Errorf("%w: nil file", ErrNotRing)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("shmring: open %s: %w", f.Name(), err)
	}
	total := fi.Size()
	if !fi.Mode().IsRegular() || total < headerSize+MinSize || total > headerSize+MaxSize {
		return nil, fmt.Errorf("%w: %s is %d bytes (mode %v)", ErrNotRing, f.Name(), total, fi.Mode())
	}
	if err := checkSealed(f.Fd()); err != nil {
		return nil, err
	}
	own, err := dupFile(f)
	if err != nil {
		return nil, err
	}
	r, err := mapRing(own, uint64(total))
	if err != nil {
		_ = own.Close()
		return nil, err
	}
	if m, v, s := r.sh.magic.Load(), r.sh.version.Load(), r.sh.size.Load(); m != magic || v != version || s != r.size {
		_ = syscall.Munmap(r.mem) // not Close: it would write the closed flag into a foreign file
		_ = own.Close()
		return nil, fmt.Errorf("%w: header magic %#x version %d size %d, want %#x, %d, %d",
			ErrNotRing, m, v, s, uint64(magic), version, r.size)
	}
	return r, nil
}

// mapRing maps total bytes of f shared and builds the Ring over them; the header is not checked.
func mapRing(f *os.File, total uint64) (*Ring, error) {
	n := total - headerSize
	if n&(n-1) != 0 {
		return nil, fmt.Errorf("%w: data area of %d bytes is not a power of two", ErrNotRing, n)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, int(total), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("shmring: mmap %d bytes: %w", total, err)
	}
	r := &Ring{
		mem: mem, data: mem[headerSize:], size: n, mask: n - 1,
		sh: mapShared(mem[:headerSize]), file: f,
		sendTurn: make(chan struct{}, 1), recvTurn: make(chan struct{}, 1),
	}
	r.spin.Store(int64(DefaultSpin))
	r.slice = sleepSlice
	return r, nil
}

// File is the ring's memfd, to pass to the other process, which maps it with Open. It belongs
// to the Ring, which closes it on Close; pass it (or a duplicate) before then.
func (r *Ring) File() *os.File { return r.file }

// Size is the data area's size in bytes. The largest message is Size()-8 bytes.
func (r *Ring) Size() int { return int(r.size) }

// SetSpin sets how long a Send or Recv that has to wait polls before it sleeps (DefaultSpin
// unless set); zero or less never spins. It applies to this process's side only. On a
// single-CPU machine the ring never spins: the peer could not run meanwhile.
func (r *Ring) SetSpin(d time.Duration) { r.spin.Store(int64(max(d, 0))) }

// SetYield sets whether a spinning Send or Recv yields its P to other goroutines every 64
// polls (the default) or keeps it for the whole spin window. Yielding is what a process with
// other goroutines to run needs: one just woken by a reply waits in the spinner's run-next
// slot. A process whose only hot goroutine is the spinner (a worker serving calls in order)
// is faster without it: each yield costs a trip through the scheduler. It applies to this
// process's side only.
func (r *Ring) SetYield(yield bool) { r.solo.Store(!yield) }

// SetIdle gives a Send or Recv that has to wait something to do meanwhile: it calls fn every
// 64 polls of its spin, and while fn reports it has work in hand (true) the spin goes on past
// its window instead of sleeping. A worker polls its GPU's events this way between requests.
// nil removes it. It applies to this process's side only, and only where the ring spins.
func (r *Ring) SetIdle(fn func() bool) {
	if fn == nil {
		r.idle.Store(nil)
		return
	}
	r.idle.Store(&fn)
}

// Close marks the ring closed for both sides, wakes any waiter of either side, waits for this
// process's calls on the ring to return (they do promptly, with ErrClosed), then unmaps it
// and closes its file. The peer's Send fails with ErrClosed; its Recv returns what is still
// in the ring, then ErrClosed. Idempotent: later calls return the first one's result.
func (r *Ring) Close() error {
	r.closeMu.Lock()
	defer r.closeMu.Unlock()
	if r.closing {
		return r.closeErr
	}
	r.closing = true
	r.sh.closed.Store(1)
	kick(r.sh.dataSeq)
	kick(r.sh.roomSeq)
	r.mu.Lock()
	r.unmapped = true
	err := syscall.Munmap(r.mem)
	r.mem, r.data = nil, nil
	r.mu.Unlock()
	r.closeErr = errors.Join(err, r.file.Close())
	return r.closeErr
}

// enter starts a call that uses the mapping: false once Close has unmapped it. A true return
// must be paired with r.mu.RUnlock.
func (r *Ring) enter() bool {
	r.mu.RLock()
	if r.unmapped {
		r.mu.RUnlock()
		return false
	}
	return true
}

// multiCPU: spinning only helps when the peer can run at the same time.
var multiCPU = runtime.NumCPU() > 1
