package cudart

import (
	"errors"
	"sync/atomic"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/nccl"
)

// A non-blocking ncclCommSplit returns before the new comm exists: NCCL runs the split as
// the parent's background work and stores the new comm through the caller's pointer when
// it is done. The contract returns a handle at once, so CollCommSplit returns the address
// of a slot NCCL writes to, and every call translates it: while the split goes on,
// CollCommAsyncError asks the parent; once the parent is done the slot holds the real comm.

// splitSlot is one split in progress, or done and known by its slot's address.
type splitSlot struct {
	child  uintptr // the new ncclComm_t, stored by NCCL's thread
	parent backend.Comm
	done   bool // the parent reported the split finished: child is the comm
}

// collSplits are the device's splits by their slots' addresses. A slot stays here until
// its comm is destroyed or aborted, and a slot abandoned before the split finished stays
// for good: NCCL may still write to it.
type collSplits map[backend.Comm]*splitSlot

// comm is the ncclComm_t behind c: c itself, a finished split's comm, or 0 for a split
// still in progress.
func (d *device) comm(c backend.Comm) backend.Comm {
	s, ok := d.splits[c]
	if !ok {
		return c
	}
	if !s.done {
		return 0
	}
	return backend.Comm(atomic.LoadUintptr(&s.child))
}

func (d *device) CollCommSplit(c backend.Comm, color, key int, cfg backend.CommConfig) (backend.Comm, error) {
	l, err := nccl.Load()
	if err != nil {
		return 0, err
	}
	parent := d.comm(c)
	if parent == 0 {
		return 0, &backend.CollError{Code: backend.CollInvalidUsage, Call: "ncclCommSplit", Detail: "the communicator is still being split from its parent"}
	}
	s := &splitSlot{parent: parent}
	err = l.CommSplit(parent, color, key, (*backend.Comm)(unsafe.Pointer(&s.child)), collConfig(cfg))
	// A non-blocking split may answer ncclSuccess (its group's ncclInProgress is not passed
	// on) while the new comm is still NULL: NCCL writes it when the split is done.
	child := backend.Comm(atomic.LoadUintptr(&s.child))
	switch {
	case err == nil && (child != 0 || color == backend.SplitNoColor): // done already
		return child, nil
	case err != nil && !errors.Is(err, backend.ErrCollInProgress):
		return 0, err
	case color == backend.SplitNoColor:
		return 0, err // nothing to wait for but the parent
	}
	if d.splits == nil {
		d.splits = collSplits{}
	}
	h := backend.Comm(uintptr(unsafe.Pointer(s)))
	d.splits[h] = s
	return h, nil // in progress: CollCommAsyncError says when it is done
}

// splitAsyncError is CollCommAsyncError of a split in progress.
func (d *device) splitAsyncError(l *nccl.Lib, s *splitSlot) error {
	if err := l.CommAsyncError(s.parent); err != nil {
		return err
	}
	if atomic.LoadUintptr(&s.child) == 0 {
		return &backend.CollError{Code: backend.CollInternalError, Call: "ncclCommSplit", Detail: "the split finished without a communicator"}
	}
	s.done = true
	return l.CommAsyncError(backend.Comm(s.child))
}

// forget drops a split's slot once its comm is freed; a split never finished keeps it.
func (d *device) forget(c backend.Comm) {
	if s, ok := d.splits[c]; ok && s.done {
		delete(d.splits, c)
	}
}
