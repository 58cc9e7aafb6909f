package backend

import "unsafe"

// BatchCopy is one copy of a MemcpyBatchAsync batch: N bytes from the source to the
// destination. A side given by a host pointer (SrcHost, DstHost: pinned memory, from HostAlloc
// or HostRegister) is host memory; a side whose host pointer is nil is the device address
// Src or Dst.
type BatchCopy struct {
	Dst, Src         DevicePtr
	DstHost, SrcHost unsafe.Pointer
	N                uint64
}

// BatchCopier issues runs of small copies in one call.
type BatchCopier interface {
	// MemcpyBatchAsync queues copies on s, a stream the device made (cudaMemcpyBatchAsync,
	// 12.8+; a loop of cudaMemcpyAsync on runtimes without it). The batch as a whole is ordered
	// on s; copies within it are in no order, so none may depend on another. failIdx is the
	// index of the copy a failure concerns, -1 when it concerns none or the runtime does not say
	// (13.0 reports no index); copies before it may have been queued. An empty batch queues
	// nothing.
	//remote:inline
	MemcpyBatchAsync(copies []BatchCopy, s Stream) (failIdx int, err error)
}
