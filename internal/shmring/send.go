//go:build linux && (amd64 || arm64)

package shmring

import (
	"context"
	"fmt"
	"unsafe"
)

// Send copies msg into the ring as one message and returns once it is there for the consumer
// (not once it is received). While the ring is full it waits, spinning then sleeping, until
// the consumer frees room, ctx ends (ctx's error) or the ring is closed (ErrClosed); ctx is
// looked at only when it has to wait. A message that could not fit even in an empty ring is
// ErrTooLarge at once. After Close of either side: ErrClosed. Zero-length messages are
// allowed. Only one process may send on a ring.
func (r *Ring) Send(ctx context.Context, msg []byte) error {
	need := recordSize(len(msg))
	if need > r.size {
		return fmt.Errorf("%w: %d bytes, ring of %d bytes holds at most %d", ErrTooLarge, len(msg), r.size, r.size-recordHeader)
	}
	if !r.enter() {
		return ErrClosed
	}
	defer r.mu.RUnlock()
	if err := takeTurn(ctx, r.sendTurn); err != nil {
		return err
	}
	defer func() { <-r.sendTurn }()

	tail := r.sh.tail.Load() // only this side writes it
	if r.size-(tail-r.headSeen) < need {
		ready := func() bool {
			r.headSeen = r.sh.head.Load()
			return r.size-(tail-r.headSeen) >= need
		}
		if err := r.wait(ctx, ready, r.sh.roomSeq, r.sh.roomSleepers); err != nil {
			return err
		}
	}
	if r.sh.closed.Load() != 0 {
		return ErrClosed
	}
	p := tail & r.mask // 8-aligned, and at least 8 bytes before the end
	*(*uint64)(unsafe.Pointer(&r.data[p])) = uint64(len(msg))
	p = (p + recordHeader) & r.mask
	n := copy(r.data[p:], msg)
	copy(r.data, msg[n:])        // the part that wraps to the start, if any
	r.sh.tail.Store(tail + need) // publishes the bytes above
	if r.sh.dataSleepers.Load() != 0 {
		kick(r.sh.dataSeq)
	}
	return nil
}
