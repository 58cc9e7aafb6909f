package sim

import (
	"sync/atomic"
	"unsafe"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// StreamWriteValue32 stores v at addr once the stream reaches this point. The simulator
// takes page-locked host memory only (its device memory has no host address), aligned to 4
// bytes, as the driver requires. Like other work, it does not run on a faulted device.
func (d *device) StreamWriteValue32(h backend.Stream, addr unsafe.Pointer, v uint32) error {
	const op = "cuStreamWriteValue32"
	if err := d.alive(op); err != nil {
		return err
	}
	s, err := d.ownStream(op, h)
	if err != nil {
		return err
	}
	if addr == nil || uintptr(addr)%4 != 0 {
		return d.fail(op, cudaerr.InvalidValue, "address %p is nil or not 4-byte aligned", addr)
	}
	if !d.b.host.pinned(addr, 4) {
		return d.fail(op, cudaerr.InvalidValue, "address %p is not in page-locked host memory", addr)
	}
	d.submit(s, &task{name: "stream write value", run: func() { atomic.StoreUint32((*uint32)(addr), v) }})
	return nil
}
