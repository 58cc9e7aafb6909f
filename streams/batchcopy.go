package streams

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// CopySpec is one copy of a batch (Stream.CopyBatch), made by CopyDevice, CopyFromHost or
// CopyToHost. The device memory it names decides its size.
type CopySpec struct {
	dst, src         device.Mem
	dstHost, srcHost *device.HostBuffer
	hostOff          uint64
}

// CopyDevice is a copy of all of src into the start of dst, both device memory of the batch's
// stream's device.
func CopyDevice(dst, src device.Mem) CopySpec { return CopySpec{dst: dst, src: src} }

// CopyFromHost is a copy of Size(dst) bytes of pinned src, from byte offset off, into dst.
func CopyFromHost(dst device.Mem, src *device.HostBuffer, off uint64) CopySpec {
	return CopySpec{dst: dst, srcHost: src, hostOff: off}
}

// CopyToHost is a copy of all of src into pinned dst at byte offset off.
func CopyToHost(dst *device.HostBuffer, off uint64, src device.Mem) CopySpec {
	return CopySpec{dstHost: dst, src: src, hostOff: off}
}

// BatchError is the error of a batch one of whose copies failed: Index is its position in the
// batch, Err what was wrong.
type BatchError struct {
	Index int
	Err   error
}

// Error implements error.
func (e *BatchError) Error() string { return fmt.Sprintf("copy %d of the batch: %v", e.Index, e.Err) }

// Unwrap returns Err.
func (e *BatchError) Unwrap() error { return e.Err }

// CopyBatch queues copies on the stream in one call where the runtime has one
// (cudaMemcpyBatchAsync, CUDA 12.8+), and as a run of single copies otherwise; the future
// completes when the GPU has done them all. The batch as a whole is ordered on the stream, but
// the copies within it are not ordered among themselves: none may read what another writes.
// Every copy is checked before anything is queued; a copy that is refused (bad memory, out of
// range, refused by the runtime) fails the future with a *BatchError naming its index, where
// the runtime says which (CUDA 13.0's batched call does not). Pinned buffers must stay
// allocated until the future completes. Zero-byte copies are skipped.
func (s *Stream) CopyBatch(ctx context.Context, copies ...CopySpec) *Future {
	if s == nil {
		return nilStream("CopyBatch")
	}
	cs := s.core()
	d := cs.Device()
	specs := append([]CopySpec(nil), copies...) // the caller may reuse its slice at once
	return core.Queue(ctx, cs, func(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
		batch := make([]backend.BatchCopy, 0, len(specs))
		at := make([]int, 0, len(specs)) // batch position -> the caller's index
		for i, c := range specs {
			bc, err := resolveCopy(d, c)
			if err != nil {
				return &BatchError{Index: i, Err: err}
			}
			if bc.N == 0 {
				continue
			}
			batch = append(batch, bc)
			at = append(at, i)
		}
		idx, err := rt.MemcpyBatchAsync(batch, h)
		if err != nil && idx >= 0 && idx < len(at) {
			return &BatchError{Index: at[idx], Err: err}
		}
		return err
	})
}

// resolveCopy checks one copy against the device and turns it into the backend's terms.
// Actor thread.
func resolveCopy(d *core.Device, c CopySpec) (backend.BatchCopy, error) {
	switch {
	case c.dstHost == nil && c.srcHost == nil && c.dst == nil && c.src == nil:
		return backend.BatchCopy{}, core.Invalid("an empty CopySpec: make copies with CopyDevice, CopyFromHost or CopyToHost")
	case c.srcHost != nil:
		dp, n, err := d.Resolve("copy destination", c.dst)
		if err != nil {
			return backend.BatchCopy{}, err
		}
		hp, err := hostAt(d, "copy source", c.srcHost, c.hostOff, n)
		return backend.BatchCopy{Dst: dp, SrcHost: hp, N: n}, err
	case c.dstHost != nil:
		sp, n, err := d.Resolve("copy source", c.src)
		if err != nil {
			return backend.BatchCopy{}, err
		}
		hp, err := hostAt(d, "copy destination", c.dstHost, c.hostOff, n)
		return backend.BatchCopy{DstHost: hp, Src: sp, N: n}, err
	}
	dp, dn, err := d.Resolve("copy destination", c.dst)
	if err != nil {
		return backend.BatchCopy{}, err
	}
	sp, sn, err := d.Resolve("copy source", c.src)
	if err != nil {
		return backend.BatchCopy{}, err
	}
	if sn > dn {
		return backend.BatchCopy{}, core.OutOfRange("copy of %d bytes into a %d-byte destination", sn, dn)
	}
	return backend.BatchCopy{Dst: dp, Src: sp, N: sn}, nil
}

// hostAt is the address of n bytes of pinned h at offset off, checked to lie inside it.
func hostAt(d *core.Device, what string, h *device.HostBuffer, off, n uint64) (unsafe.Pointer, error) {
	end := off + n
	if end < off {
		return nil, core.OutOfRange("%s: %d bytes at offset %d overflow", what, n, off)
	}
	p, err := d.ResolveHost(what, (*core.HostBuffer)(h), end)
	if err != nil {
		return nil, err
	}
	return unsafe.Add(p, off), nil
}
