package actor

import (
	"context"
	"runtime/trace"
	"sync"
	"sync/atomic"
	"time"
)

// mailbox is the actor's bounded, lock-free multi-producer queue.
//
// Not a Go channel: under pipelined load from several goroutines a channel's lock (taken by
// every send, by the actor's every receive and by its spinning polls) is most of the actor's
// cost. Here senders push onto an atomic stack with one CAS, and the actor takes everything at
// once with one swap and reverses it, which keeps each sender's order and drains in batches by
// construction. Polling while spinning is one atomic load.
type mailbox struct {
	head  atomic.Pointer[node] // newest first
	count atomic.Int64         // pushed and not yet taken: the bound
	limit int64
	_     [48]byte

	// Parking: the actor sets sleeping, looks once more, then waits for a token. A sender that
	// pushes and finds sleeping set clears it and leaves a token.
	sleeping atomic.Bool
	wakeCh   chan struct{}

	// Back-pressure: senders that find the mailbox full wait for spaceCh to be closed, which
	// the actor does after taking messages while someone waits.
	waiting atomic.Int32
	spaceMu sync.Mutex
	spaceCh chan struct{}
}

type node struct {
	o    op
	next *node
}

func newMailbox(limit int) *mailbox {
	return &mailbox{limit: int64(limit), wakeCh: make(chan struct{}, 1), spaceCh: make(chan struct{})}
}

// push appends n, waiting for room while the mailbox is full, until ctx ends. n must not be
// queued already: a Future's own entry is pushed once.
func (m *mailbox) push(ctx context.Context, n *node) error {
	for m.count.Add(1) > m.limit {
		m.count.Add(-1)
		if err := m.waitSpace(ctx); err != nil {
			return err
		}
	}
	for {
		old := m.head.Load()
		n.next = old
		if m.head.CompareAndSwap(old, n) {
			break
		}
	}
	m.wake()
	return nil
}

// waitSpace returns once the mailbox may have room, or ctx's error.
func (m *mailbox) waitSpace(ctx context.Context) error {
	m.waiting.Add(1)
	defer m.waiting.Add(-1)
	m.spaceMu.Lock()
	ch := m.spaceCh
	m.spaceMu.Unlock()
	// Checked after taking the channel: either this sees the actor's take, or the actor's
	// take saw waiting > 0 and will close the channel held here.
	if m.count.Load() < m.limit {
		return nil
	}
	var done <-chan struct{}
	if ctx != nil {
		done = ctx.Done()
		defer trace.StartRegion(ctx, "gpuactor.mailbox.full").End()
	}
	select {
	case <-ch:
		return nil
	case <-done:
		return ctx.Err()
	}
}

// take removes every queued message and returns them oldest first.
func (m *mailbox) take() *node {
	n := m.head.Swap(nil)
	if n == nil {
		return nil
	}
	var fifo *node
	k := int64(0)
	for n != nil {
		next := n.next
		n.next = fifo
		fifo = n
		n = next
		k++
	}
	m.count.Add(-k)
	if m.waiting.Load() > 0 {
		m.spaceMu.Lock()
		close(m.spaceCh)
		m.spaceCh = make(chan struct{})
		m.spaceMu.Unlock()
	}
	return fifo
}

// empty reports whether nothing is queued: one atomic load, cheap enough to spin on.
func (m *mailbox) empty() bool { return m.head.Load() == nil }

// wake leaves a token for a parked (or parking) actor.
func (m *mailbox) wake() {
	if m.sleeping.Load() && m.sleeping.CompareAndSwap(true, false) {
		select {
		case m.wakeCh <- struct{}{}:
		default:
		}
	}
}

// park blocks the actor until a wake, or until timeout when it is positive. ready is checked
// after announcing the sleep, so a message or state change that raced the announcement is
// never missed. A stale token only costs one spurious return.
func (m *mailbox) park(ready func() bool, timeout time.Duration, timer **time.Timer) {
	m.sleeping.Store(true)
	if ready() {
		m.sleeping.Store(false)
		return
	}
	if timeout <= 0 {
		<-m.wakeCh
		return
	}
	if *timer == nil {
		*timer = time.NewTimer(timeout)
	} else {
		(*timer).Reset(timeout)
	}
	select {
	case <-m.wakeCh:
		(*timer).Stop()
	case <-(*timer).C:
		m.sleeping.Store(false)
	}
}
