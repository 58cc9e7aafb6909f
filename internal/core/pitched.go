package core

import (
	"context"
	"fmt"
	"math/bits"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// MallocPitch allocates rows rows of at least width bytes (cudaMallocPitch) into b, a zero
// Buffer the caller holds, and returns the pitch the runtime chose; b spans pitch*rows bytes.
// It is charged as device memory once the pitch is known.
func MallocPitch(ctx context.Context, d *Device, b *Buffer, width, rows uint64) (uint64, error) {
	if width == 0 || rows == 0 {
		return 0, Invalid("MallocPitch of %d rows of %d bytes: both must be positive", rows, width)
	}
	type made struct {
		b     *Buffer
		pitch uint64
	}
	m, err := Make(ctx, d, func(rt backend.Device, _ *Tracker) (made, error) {
		p, pt, err := rt.MallocPitch(width, rows)
		if err != nil {
			return made{}, fmt.Errorf("gpuactor: MallocPitch(%d rows of %d bytes) on device %d: %w", rows, width, d.ordinal, err)
		}
		hi, size := bits.Mul64(pt, rows)
		if hi != 0 || pt < width {
			_ = rt.Free(p)
			return made{}, Invalid("MallocPitch of %d rows of %d bytes: the runtime's pitch %d does not fit", rows, width, pt)
		}
		if err := d.Charge(KindDevice, size); err != nil {
			_ = rt.Free(p)
			return made{}, err
		}
		b.dev, b.ptr, b.size = d, p, size
		d.live.buffers.add(b)
		return made{b, pt}, nil
	}, func(_ backend.Device, _ *Tracker, m made) { _ = d.freeBuffer(m.b) })
	return m.pitch, err
}
