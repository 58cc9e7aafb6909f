package cudart

import (
	"errors"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// memcpyAttributes is a cudaMemcpyAttributes: the source access order, the source and
// destination location hints (each a cudaMemLocation: type, id) and flags; 24 bytes, aligned
// to 4.
type memcpyAttributes struct {
	srcAccessOrder int32
	srcLocType     int32
	srcLocID       int32
	dstLocType     int32
	dstLocID       int32
	flags          uint32
}

// cudaMemcpySrcAccessOrderStream: every source is read in stream order, as cudaMemcpyAsync
// reads it.
const memcpySrcAccessOrderStream = 1

// sizeMax is SIZE_MAX, the failIdx of an error that concerns no copy in particular.
const sizeMax = ^uintptr(0)

// MemcpyBatchAsync queues copies on s (cudaMemcpyBatchAsync) with one attribute for all: sources
// read in stream order, no location hints. Where the runtime lacks the call (before 12.8) it
// queues one cudaMemcpyAsync per copy, in order, and stops at the first that fails. failIdx is
// as backend.BatchCopier says: 12.8 and 12.9 report it, 13.0 does not.
func (r *Runtime) MemcpyBatchAsync(copies []backend.BatchCopy, s Stream) (failIdx int, err error) {
	if len(copies) == 0 {
		return -1, nil
	}
	n := len(copies)
	dsts := make([]uintptr, n)
	srcs := make([]uintptr, n)
	sizes := make([]uintptr, n)
	for i, c := range copies {
		dsts[i], srcs[i], sizes[i] = batchAddr(c.Dst, c.DstHost), batchAddr(c.Src, c.SrcHost), uintptr(c.N)
	}
	attr := memcpyAttributes{srcAccessOrder: memcpySrcAccessOrderStream}
	attrIdx := uintptr(0)
	fail := sizeMax
	// The arrays hold device addresses and pinned host addresses (C memory), never Go pointers.
	if r.Major() >= 13 {
		err = r.call(fnMemcpyBatchAsync, uintptr(unsafe.Pointer(&dsts[0])), uintptr(unsafe.Pointer(&srcs[0])),
			uintptr(unsafe.Pointer(&sizes[0])), uintptr(n), uintptr(unsafe.Pointer(&attr)),
			uintptr(unsafe.Pointer(&attrIdx)), 1, uintptr(s))
	} else {
		err = r.call(fnMemcpyBatchAsync, uintptr(unsafe.Pointer(&dsts[0])), uintptr(unsafe.Pointer(&srcs[0])),
			uintptr(unsafe.Pointer(&sizes[0])), uintptr(n), uintptr(unsafe.Pointer(&attr)),
			uintptr(unsafe.Pointer(&attrIdx)), 1, uintptr(unsafe.Pointer(&fail)), uintptr(s))
	}
	if errors.Is(err, ErrSymbolNotFound) {
		return r.memcpyLoop(copies, s)
	}
	if err == nil {
		return -1, nil
	}
	if fail == sizeMax || fail >= uintptr(n) {
		return -1, err
	}
	return int(fail), err
}

// memcpyLoop is MemcpyBatchAsync on a runtime without the batched call.
func (r *Runtime) memcpyLoop(copies []backend.BatchCopy, s Stream) (int, error) {
	f := getFrame()
	defer putFrame(f)
	for i, c := range copies {
		kind := MemcpyDeviceToDevice
		switch {
		case c.DstHost != nil && c.SrcHost != nil:
			kind = MemcpyHostToHost
		case c.SrcHost != nil:
			kind = MemcpyHostToDevice
		case c.DstHost != nil:
			kind = MemcpyDeviceToHost
		}
		if err := r.memcpyAsync(f, batchAddr(c.Dst, c.DstHost), batchAddr(c.Src, c.SrcHost), c.N, kind, s); err != nil {
			return i, err
		}
	}
	return -1, nil
}

// batchAddr is a batch copy's side as one address: the host pointer where there is one.
func batchAddr(dev DevicePtr, host unsafe.Pointer) uintptr {
	if host != nil {
		return uintptr(host)
	}
	return uintptr(dev)
}

func (d *device) MemcpyBatchAsync(copies []backend.BatchCopy, s Stream) (int, error) {
	return d.rt.MemcpyBatchAsync(copies, s)
}
