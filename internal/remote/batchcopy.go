package remote

import (
	"unsafe"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// A batch copy crosses as its count, then per copy a word of which sides are host memory
// (batchDstHost, batchSrcHost), the two addresses (host ones translated to the worker's
// mapping of HostAlloc's memory) and the size; then the stream.
const (
	batchDstHost = 1 << iota
	batchSrcHost
)

// maxBatch bounds the copies of one batch the worker accepts, so that a corrupt count cannot
// make it allocate without limit.
const maxBatch = 1 << 20

// MemcpyBatchAsync queues a batch of copies in the worker; host sides must be HostAlloc's
// memory. It waits for the worker's answer, which carries the index of a failing copy.
func (d *Device) MemcpyBatchAsync(copies []backend.BatchCopy, s backend.Stream) (int, error) {
	if len(copies) == 0 {
		return -1, nil
	}
	e := request(mMemcpyBatchAsync)
	e.u64(uint64(len(copies)))
	for i, c := range copies {
		var flags uint64
		dst, src := uint64(c.Dst), uint64(c.Src)
		var err error
		if c.DstHost != nil {
			flags |= batchDstHost
			if dst, err = d.peerOf("cudaMemcpyBatchAsync", c.DstHost, c.N); err != nil {
				return i, err
			}
		}
		if c.SrcHost != nil {
			flags |= batchSrcHost
			if src, err = d.peerOf("cudaMemcpyBatchAsync", c.SrcHost, c.N); err != nil {
				return i, err
			}
		}
		e.u64(flags)
		e.u64(dst)
		e.u64(src)
		e.u64(c.N)
	}
	e.u64(uint64(s))
	r, err := d.do(e)
	if err != nil {
		return -1, err
	}
	idx := r.int()
	return idx, r.inline()
}

// serveMemcpyBatchAsync decodes a batch, checks every host side against the worker's table of
// memory shared with the parent, and queues it.
func (s *server) serveMemcpyBatchAsync(in *dec, out *enc) error {
	const op = "cudaMemcpyBatchAsync"
	n := in.u64()
	if in.err != nil {
		return in.err
	}
	if n > maxBatch {
		return &cudaerr.Error{Op: op, Code: cudaerr.InvalidValue, Message: "a batch of more than 1048576 copies"}
	}
	copies := make([]backend.BatchCopy, n)
	bad, badErr := -1, error(nil)
	for i := range copies {
		flags, dst, src, size := in.u64(), in.u64(), in.u64(), in.u64()
		c := backend.BatchCopy{Dst: backend.DevicePtr(dst), Src: backend.DevicePtr(src), N: size}
		if flags&batchDstHost != 0 {
			c.Dst = 0
			c.DstHost, badErr = s.sharedAt(op, dst, size, badErr)
		}
		if flags&batchSrcHost != 0 {
			c.Src = 0
			c.SrcHost, badErr = s.sharedAt(op, src, size, badErr)
		}
		if badErr != nil && bad < 0 {
			bad = i
		}
		copies[i] = c
	}
	st := backend.Stream(in.u64())
	if in.err != nil {
		return in.err
	}
	if bad >= 0 {
		out.i64(int64(bad))
		return inline(out, badErr)
	}
	idx, err := s.dev.MemcpyBatchAsync(copies, st)
	out.i64(int64(idx))
	return inline(out, err)
}

// sharedAt is the worker's address of n bytes at p, in memory shared with the parent; prev, an
// earlier failure, is kept rather than checking further.
func (s *server) sharedAt(op string, p, n uint64, prev error) (unsafe.Pointer, error) {
	if prev != nil {
		return nil, prev
	}
	reg, off, err := s.shared(op, p, n)
	if err != nil {
		return nil, err
	}
	return reg.at(off), nil
}
