package remote

import (
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// The 2D copies between host and device name host memory, which crosses as an address in
// memory shared with the worker (hostmem.go), as CopyHtoD's does. The span a 2D copy reaches
// is (height-1)*pitch + width bytes, checked on both sides.

// span2D is the bytes a 2D region reaches from its start; ^0 when that overflows, which no
// shared region holds.
func span2D(pitch, width, height uint64) uint64 {
	if width == 0 || height == 0 {
		return 0
	}
	if height-1 != 0 && pitch > (^uint64(0)-width)/(height-1) {
		return ^uint64(0)
	}
	return (height-1)*pitch + width
}

// Copy2DHtoD queues a 2D copy from HostAlloc's memory on s.
func (d *Device) Copy2DHtoD(dst backend.DevicePtr, dpitch uint64, src unsafe.Pointer, spitch, width, height uint64, s backend.Stream) error {
	at, err := d.peerOf("cudaMemcpy2DAsync", src, span2D(spitch, width, height))
	if err != nil {
		return err
	}
	return d.postVoid(mCopy2DHtoD, s, uint64(dst), dpitch, at, spitch, width, height, uint64(s))
}

// Copy2DDtoH queues a 2D copy into HostAlloc's memory on s.
func (d *Device) Copy2DDtoH(dst unsafe.Pointer, dpitch uint64, src backend.DevicePtr, spitch, width, height uint64, s backend.Stream) error {
	at, err := d.peerOf("cudaMemcpy2DAsync", dst, span2D(dpitch, width, height))
	if err != nil {
		return err
	}
	return d.postVoid(mCopy2DDtoH, s, at, dpitch, uint64(src), spitch, width, height, uint64(s))
}

// serveCopy2DHtoD copies from memory shared with the parent, checked against the worker's
// table of it.
func (s *server) serveCopy2DHtoD(in *dec, out *enc) error {
	dst, dpitch, src, spitch := backend.DevicePtr(in.u64()), in.u64(), in.u64(), in.u64()
	width, height, st := in.u64(), in.u64(), backend.Stream(in.u64())
	reg, off, err := s.shared("cudaMemcpy2DAsync", src, span2D(spitch, width, height))
	if err != nil || in.err != nil {
		return firstErr(in.err, err)
	}
	return s.dev.Copy2DHtoD(dst, dpitch, reg.at(off), spitch, width, height, st)
}

// serveCopy2DDtoH copies to memory shared with the parent, checked against the worker's
// table of it.
func (s *server) serveCopy2DDtoH(in *dec, out *enc) error {
	dst, dpitch, src, spitch := in.u64(), in.u64(), backend.DevicePtr(in.u64()), in.u64()
	width, height, st := in.u64(), in.u64(), backend.Stream(in.u64())
	reg, off, err := s.shared("cudaMemcpy2DAsync", dst, span2D(dpitch, width, height))
	if err != nil || in.err != nil {
		return firstErr(in.err, err)
	}
	return s.dev.Copy2DDtoH(reg.at(off), dpitch, src, spitch, width, height, st)
}
