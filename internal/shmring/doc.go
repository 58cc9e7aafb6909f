// Package shmring is a one-way message channel between two processes over shared memory: the
// transport of worker mode, where a device's actor runs in a supervised child process and the
// parent talks to it as fast as to an in-process actor.
//
// # Layout
//
// A ring lives in a memfd (anonymous shared memory that a Unix socket or exec can hand to another
// process) sealed against growing and shrinking, so the peer cannot truncate it under us and
// turn our next access into SIGBUS. The file is a 4 KiB header page followed by the data area,
// whose size is a power of two of at least 4 KiB. In the header each field a different side
// writes has a cache line of its own (128 bytes apart: some CPUs fetch lines in pairs), so the
// producer publishing a message and the consumer freeing room never write the same line:
//
//	0    magic, version, data size       written once by New
//	128  tail: bytes ever written        written by the producer only
//	256  head: bytes ever read           written by the consumer only
//	384  closed flag                     written by Close, of either side
//	512  data futex word, data sleepers  the consumer sleeping until there is data
//	640  room futex word, room sleepers  the producer sleeping until there is room
//
// head and tail count bytes from the ring's creation and never wrap (2^64 bytes); a position's
// offset in the data area is its value modulo the size. A message is an 8-byte record header
// holding its length, then its bytes, padded to a multiple of 8, so every record header is
// 8-byte aligned and never straddles the end of the data area. The bytes themselves may: they
// are copied in two pieces, which lets a message use the whole ring less its header.
//
// # Waiting
//
// The producer writes a message's bytes and then publishes it by storing the new tail; the
// consumer copies a message out and then frees its room by storing the new head. Both are
// sync/atomic operations on the shared mapping, which are sequentially consistent and so also
// order the plain copies around them, across processes as within one (the hardware guarantees
// it: these are ordinary stores and loads on memory both processes map).
//
// A side that must wait (consumer: ring empty; producer: no room) first spins, polling the
// other side's counter, for the spin window (DefaultSpin, see SetSpin), as the in-process
// actor's mailbox does: waking a sleeping thread costs more than the round trip it waits for.
// It spins only with a token of the process's spin budget (internal/spin), shared with the
// actors and every other spinner of the process, and sleeps at once without one. Past the
// window it sleeps on its futex word: it reads the word, adds itself to the
// sleepers count, checks the condition once more, and calls FUTEX_WAIT with the word's value
// read before. The other side, after publishing, loads the sleepers count and only when it is
// not zero bumps the futex word and calls FUTEX_WAKE. Either the waiter's re-check sees the
// publication, or the publisher's load sees the waiter (both orders are sequentially
// consistent atomics), and a bump between the waiter's read and its FUTEX_WAIT makes the wait
// return at once: a wake is never lost. So while both sides keep up (the fast path) sending and
// receiving are a copy and a few atomic loads and stores: no system call, no lock.
//
// Every sleep is bounded (a few milliseconds, less when the context's deadline is nearer), so
// a waiter notices a cancelled context, a Close, or a peer that died holding nothing, without
// anyone waking it; a context's cancellation and Close also wake it at once. The futexes are
// the shared (not _PRIVATE) kind, keyed by the memfd's page, so they work across processes.
//
// # Lifetime
//
// Close marks the shared closed flag, which both sides see, and wakes every waiter of either
// side; it then waits for the calls of its own process that use the mapping to leave, and
// unmaps it. A peer that dies without closing is noticed by the process that supervises it,
// which calls Close. The receiving side still gets the messages sent before the close, then
// ErrClosed.
package shmring
