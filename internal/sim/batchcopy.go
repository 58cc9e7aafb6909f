package sim

import (
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// MemcpyBatchAsync queues copies on s as cudaMemcpyBatchAsync (12.8) does, reporting the index
// of the copy that fails. The simulator queues them in order, each as its single copy
// (CopyHtoD, CopyDtoH, CopyDtoD) would be, and stops at the first that is refused: the copies
// before it stay queued. A copy between two host pointers is refused: the simulator has no
// host-to-host copy engine.
func (d *device) MemcpyBatchAsync(copies []backend.BatchCopy, s backend.Stream) (int, error) {
	const op = "cudaMemcpyBatchAsync"
	if err := d.alive(op); err != nil {
		return -1, err
	}
	if len(copies) == 0 {
		return -1, nil
	}
	if _, err := d.ownStream(op, s); err != nil {
		return -1, err
	}
	for i, c := range copies {
		var err error
		switch {
		case c.DstHost != nil && c.SrcHost != nil:
			err = d.fail(op, cudaerr.InvalidValue, "copy %d of the batch is host to host", i)
		case c.SrcHost != nil:
			err = d.CopyHtoD(c.Dst, c.SrcHost, c.N, s)
		case c.DstHost != nil:
			err = d.CopyDtoH(c.DstHost, c.Src, c.N, s)
		default:
			err = d.CopyDtoD(c.Dst, c.Src, c.N, s)
		}
		if err != nil {
			return i, err
		}
	}
	return -1, nil
}
