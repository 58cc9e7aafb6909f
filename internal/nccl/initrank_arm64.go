package nccl

import (
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// ncclUniqueId is a 128-byte struct passed by value. AAPCS64 passes a composite over 16
// bytes by reference: the caller copies it to memory and passes the copy's address in the
// next integer register. So ncclCommInitRankConfig(comm, nranks, id, rank, config) takes
// comm, nranks, &copy, rank and config in x0 to x4.

// initRank calls ncclCommInitRankConfig (cfg != nil) or ncclCommInitRank (fn is the one
// to call) with id by value.
func initRank(fn uintptr, comm *backend.Comm, nranks int, id *backend.CommID, rank int, cfg *Config) uintptr {
	cp := new(backend.CommID)
	*cp = *id
	r, _, _ := purego.SyscallN(fn,
		uintptr(unsafe.Pointer(comm)), uintptr(nranks), uintptr(unsafe.Pointer(cp)), uintptr(rank), uintptr(unsafe.Pointer(cfg)))
	return r
}
