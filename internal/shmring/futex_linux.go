//go:build linux && (amd64 || arm64)

package shmring

import (
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Futex operations. The shared (not _PRIVATE) ones: the word is in memory another process
// maps, so the kernel must key waiters by the file's page, not by this process's address.
const (
	futexWait = 0
	futexWake = 1
)

// futexSleep blocks while *addr == val, for at most d, or until a futexWakeAll on the word
// (from any process mapping it), or a signal. Every outcome is a reason to look again, so it
// reports none of them.
func futexSleep(addr *atomic.Uint32, val uint32, d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_, _, _ = syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWait,
		uintptr(val), uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// futexWakeAll wakes every waiter on the word, in any process.
func futexWakeAll(addr *atomic.Uint32) {
	_, _, _ = syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWake,
		uintptr(1<<31-1), 0, 0, 0)
}

// kick bumps a futex word and wakes its waiters: a waiter that read the word before the bump
// and has not slept yet returns from FUTEX_WAIT at once, so the wake cannot be lost.
func kick(seq *atomic.Uint32) {
	seq.Add(1)
	futexWakeAll(seq)
}
