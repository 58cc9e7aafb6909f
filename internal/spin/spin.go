// Package spin holds the process's spin budget: how many goroutines may poll at once, each
// holding its P, instead of parking.
//
// A spinning goroutine keeps its P busy until it stops; a locked actor goroutine does not
// even yield it. Were every P held so, the goroutines whose messages and completions the
// spinners wait for would run only when the scheduler preempts one, every 10 ms or so. So
// every spinner of the library (the device actors, Future.Await, group workers, the
// shared-memory rings) takes a token from one budget before it spins and gives it back when
// it stops, and the budget always leaves one P to spare: with GOMAXPROCS = n at most n-1
// spin at once, and with one P nobody spins. A spinner refused a token parks at once, as it
// would at the end of its window. CUDA's own wait makes the same choice, spinning only while
// a process has fewer active contexts than processors.
package spin

import (
	"runtime"
	"sync/atomic"
)

// Budget counts the spinners holding a token against a limit. The zero value has a limit of
// 0 and refuses every token. Its methods are safe for concurrent use.
type Budget struct {
	limit    atomic.Int32
	held     atomic.Int32
	peak     atomic.Int32
	grants   atomic.Uint64
	refusals atomic.Uint64
}

// Stats are a budget's counters, for tests and diagnostics to read in place of the clock.
type Stats struct {
	Limit    int    // tokens that may be held at once: GOMAXPROCS-1 for the process's budget
	Held     int    // tokens held now
	Peak     int    // the most tokens held at once since the budget was made (or ResetPeak)
	Grants   uint64 // tokens handed out
	Refusals uint64 // tokens asked for and refused because the limit was reached
}

// New returns a budget for a process of procs Ps: it leaves one P to spare.
func New(procs int) *Budget {
	b := &Budget{}
	b.Resize(procs)
	return b
}

// Resize sets the limit for a process of procs Ps (procs-1 tokens, none below 2 Ps). Tokens
// held beyond a lowered limit stay held until given back; no new one is granted meanwhile.
func (b *Budget) Resize(procs int) {
	b.limit.Store(int32(max(procs-1, 0)))
}

// Acquire takes a token and reports whether it got one. A caller that got one must Release
// it when it stops spinning; one that did not must not spin.
func (b *Budget) Acquire() bool {
	n := b.held.Add(1)
	if n > b.limit.Load() {
		b.held.Add(-1)
		b.refusals.Add(1)
		return false
	}
	b.grants.Add(1)
	for {
		p := b.peak.Load()
		if n <= p || b.peak.CompareAndSwap(p, n) {
			return true
		}
	}
}

// Release gives back a token taken by Acquire.
func (b *Budget) Release() {
	if b.held.Add(-1) < 0 {
		panic("spin: Release without Acquire")
	}
}

// ResetPeak sets the peak to the tokens held now, so a test can measure its own peak.
func (b *Budget) ResetPeak() { b.peak.Store(b.held.Load()) }

// Stats returns the counters now.
func (b *Budget) Stats() Stats {
	return Stats{
		Limit:    int(b.limit.Load()),
		Held:     int(b.held.Load()),
		Peak:     int(b.peak.Load()),
		Grants:   b.grants.Load(),
		Refusals: b.refusals.Load(),
	}
}

// process is the budget of the process: its Ps are shared by every spinner of the library.
var process = New(runtime.GOMAXPROCS(0))

// Process returns the process's budget.
func Process() *Budget { return process }

// Refresh sizes the process's budget to GOMAXPROCS now. The spinners' owners call it as they
// are made (an actor, a group, a ring), rarely enough that reading GOMAXPROCS, which takes
// the scheduler's lock, costs nothing that matters, and often enough that a program (or a
// test) that changed GOMAXPROCS gets the budget it implies.
func Refresh() { process.Resize(runtime.GOMAXPROCS(0)) }

// Acquire takes a token from the process's budget.
func Acquire() bool { return process.Acquire() }

// Release gives a token back to the process's budget.
func Release() { process.Release() }
