//go:build linux && (amd64 || arm64)

package shmring

import (
	"sync/atomic"
	"unsafe"
)

// Offsets in the header page (see the package comment). Fields written by different sides are
// 128 bytes apart.
const (
	offMagic        = 0   // uint64
	offVersion      = 8   // uint32
	offSize         = 16  // uint64: bytes in the data area
	offTail         = 128 // uint64, producer
	offHead         = 256 // uint64, consumer
	offClosed       = 384 // uint32, either side's Close
	offDataSeq      = 512 // uint32 futex word: bumped to wake the consumer
	offDataSleepers = 516 // uint32: consumers asleep on offDataSeq (0 or 1)
	offRoomSeq      = 640 // uint32 futex word: bumped to wake the producer
	offRoomSleepers = 644 // uint32: producers asleep on offRoomSeq (0 or 1)

	headerSize = 4096 // the header page; the data area starts after it

	magic   = 0x676e69726d687367 // "gshmring", little-endian
	version = 1

	recordHeader = 8 // a message's length, as a uint64 (the high half is zero)

	// MinSize and MaxSize bound the data area New makes.
	MinSize = 4 << 10
	MaxSize = 1 << 30
)

// recordSize is the room a message of n bytes takes: its header and its bytes, rounded up to 8
// so the next header stays aligned.
func recordSize(n int) uint64 {
	return recordHeader + (uint64(n)+7)&^7
}

// dataSize rounds a requested size up to the power of two New uses.
func dataSize(size int) uint64 {
	n := uint64(MinSize)
	for n < uint64(size) {
		n <<= 1
	}
	return n
}

// shared points into a mapped header page. The pointers are derived from the mapping with
// unsafe, which is sound because the mapping is fixed memory outside the Go heap: it never
// moves, the collector never scans or frees it, and it stays mapped until Ring.Close, which
// first waits for every call of this process using these pointers to leave (Ring.mu). The
// offsets are multiples of 8 in a page-aligned mapping, as 64-bit atomics need.
type shared struct {
	tail, head            *atomic.Uint64
	closed                *atomic.Uint32
	dataSeq, dataSleepers *atomic.Uint32
	roomSeq, roomSleepers *atomic.Uint32
	magic, size           *atomic.Uint64
	version               *atomic.Uint32
}

func mapShared(hdr []byte) shared {
	u64 := func(off int) *atomic.Uint64 { return (*atomic.Uint64)(unsafe.Pointer(&hdr[off])) }
	u32 := func(off int) *atomic.Uint32 { return (*atomic.Uint32)(unsafe.Pointer(&hdr[off])) }
	return shared{
		tail: u64(offTail), head: u64(offHead), closed: u32(offClosed),
		dataSeq: u32(offDataSeq), dataSleepers: u32(offDataSleepers),
		roomSeq: u32(offRoomSeq), roomSleepers: u32(offRoomSleepers),
		magic: u64(offMagic), size: u64(offSize), version: u32(offVersion),
	}
}
