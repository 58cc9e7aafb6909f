package nccl

import (
	"encoding/binary"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// ncclUniqueId is a 128-byte struct passed by value. The System V AMD64 ABI classifies a
// struct over 16 bytes as MEMORY: the caller copies it onto the stack, in the argument area
// after the register arguments, and it takes no register. So
//
//	ncclCommInitRankConfig(comm, nranks, id, rank, config)
//
// loads comm, nranks, rank and config into rdi, rsi, rdx and rcx, and the 16 eightbytes of
// id into the first 16 stack slots. purego.SyscallN puts its first six words in rdi, rsi,
// rdx, rcx, r8 and r9 and the rest on the stack in order, so the call is made with the four
// register arguments, two unused words for r8 and r9, and id's 16 words.

// idWords is id as the 16 eightbytes the callee reads from its stack.
func idWords(id *backend.CommID) (w [16]uintptr) {
	for i := range w {
		w[i] = uintptr(binary.LittleEndian.Uint64(id[8*i:]))
	}
	return w
}

// initRank calls ncclCommInitRankConfig (cfg != nil) or ncclCommInitRank (fn is the one
// to call) with id by value.
func initRank(fn uintptr, comm *backend.Comm, nranks int, id *backend.CommID, rank int, cfg *Config) uintptr {
	w := idWords(id)
	r, _, _ := purego.SyscallN(fn,
		uintptr(unsafe.Pointer(comm)), uintptr(nranks), uintptr(rank), uintptr(unsafe.Pointer(cfg)), 0, 0,
		w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10], w[11], w[12], w[13], w[14], w[15])
	return r
}
