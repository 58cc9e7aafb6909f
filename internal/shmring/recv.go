//go:build linux && (amd64 || arm64)

package shmring

import (
	"context"
	"fmt"
	"unsafe"
)

// Recv waits for the next message and returns it appended to buf[:0] (grown as needed; the
// result does not alias the ring). While the ring is empty it waits, spinning then sleeping,
// until a message arrives, ctx ends (ctx's error) or the ring is closed; ctx is looked at
// only when it has to wait. Once either side has closed the ring Recv still returns the
// messages in it, then ErrClosed (after this side's own Close, ErrClosed at once). A ring
// whose counters or record headers make no sense is ErrCorrupt. Only one process may receive
// on a ring.
func (r *Ring) Recv(ctx context.Context, buf []byte) ([]byte, error) {
	if !r.enter() {
		return buf[:0], ErrClosed
	}
	defer r.mu.RUnlock()
	if err := takeTurn(ctx, r.recvTurn); err != nil {
		return buf[:0], err
	}
	defer func() { <-r.recvTurn }()

	head := r.sh.head.Load() // only this side writes it
	if r.tailSeen == head {
		r.tailSeen = r.sh.tail.Load()
		if r.tailSeen == head {
			ready := func() bool {
				r.tailSeen = r.sh.tail.Load()
				return r.tailSeen != head
			}
			if err := r.wait(ctx, ready, r.sh.dataSeq, r.sh.dataSleepers); err != nil {
				return buf[:0], err
			}
		}
	}
	avail := r.tailSeen - head
	p := head & r.mask
	n := *(*uint64)(unsafe.Pointer(&r.data[p]))
	if avail > r.size || n > r.size-recordHeader || recordSize(int(n)) > avail {
		return buf[:0], fmt.Errorf("%w: record of %d bytes at %d with %d bytes published (ring of %d)", ErrCorrupt, n, head, avail, r.size)
	}
	if uint64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	p = (p + recordHeader) & r.mask
	k := copy(buf, r.data[p:])
	copy(buf[k:], r.data)
	r.sh.head.Store(head + recordSize(int(n))) // frees the room after the copy above
	if r.sh.roomSleepers.Load() != 0 {
		kick(r.sh.roomSeq)
	}
	return buf, nil
}
