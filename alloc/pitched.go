package alloc

import (
	"context"
	"math"
	"math/bits"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Pitched is a 2D or 3D array of T in one device's memory, laid out as cudaMallocPitch and
// cudaMalloc3D lay it out: Depth slices of Height rows of Width elements, each row starting
// Pitch bytes after the one before (the last row of a slice is followed by the first of the
// next), so that every row is aligned for the device. A 2D array has Depth 1. It embeds the
// *device.Buffer of all Pitch×Height×Depth bytes, so it is a device.Mem with Size,
// DevicePtr and Slice; kernels index it as base + (z*Height+y)*Pitch + x*sizeof(T). Copy to
// and from it with CopyToPitched, CopyFromPitched, CopyPitched and MemsetPitched. Its
// methods are safe for concurrent use.
type Pitched[T any] struct {
	*device.Buffer
	width, height, depth int
	pitch                uint64
	elemSize             uintptr
	mem                  core.Buffer
}

// MallocPitch allocates a width×height array of T (cudaMallocPitch) on d and returns once it
// is allocated. width and height must be positive and the rows' bytes fit the device's
// maximum pitch. Free it with Close.
func MallocPitch[T any](ctx context.Context, d *device.Device, width, height int) (*Pitched[T], error) {
	return mallocPitched[T](ctx, "MallocPitch", d, width, height, 1)
}

// Malloc3D allocates a width×height×depth array of T (as cudaMalloc3D does, one pitched
// allocation of height×depth rows) on d and returns once it is allocated. Free it with Close.
func Malloc3D[T any](ctx context.Context, d *device.Device, width, height, depth int) (*Pitched[T], error) {
	return mallocPitched[T](ctx, "Malloc3D", d, width, height, depth)
}

func mallocPitched[T any](ctx context.Context, op string, d *device.Device, width, height, depth int) (*Pitched[T], error) {
	if d == nil {
		return nil, core.Invalid("%s on a nil device", op)
	}
	size, err := elemSize[T]()
	if err != nil {
		return nil, err
	}
	if width <= 0 || height <= 0 || depth <= 0 {
		return nil, core.Invalid("%s of %d×%d×%d elements: every extent must be positive", op, width, height, depth)
	}
	hi, rowBytes := bits.Mul64(uint64(width), uint64(size))
	hi2, rows := bits.Mul64(uint64(height), uint64(depth))
	if hi != 0 || hi2 != 0 || rows > math.MaxInt || rowBytes > math.MaxInt {
		return nil, core.Invalid("%s of %d×%d×%d elements of %d bytes overflows", op, width, height, depth, size)
	}
	if _, ok := volume(width, height, depth); !ok {
		return nil, core.Invalid("%s of %d×%d×%d elements overflows an int", op, width, height, depth)
	}
	p := &Pitched[T]{width: width, height: height, depth: depth, elemSize: size}
	p.Buffer = (*device.Buffer)(&p.mem)
	pitch, err := core.MallocPitch(ctx, coreDev(d), &p.mem, rowBytes, rows)
	if err != nil {
		return nil, err
	}
	p.pitch = pitch
	return p, nil
}

// volume is w*h*d, and whether it fits an int.
func volume(w, h, d int) (int, bool) {
	hi, wh := bits.Mul64(uint64(w), uint64(h))
	hi2, whd := bits.Mul64(wh, uint64(d))
	if hi != 0 || hi2 != 0 || whd > math.MaxInt {
		return 0, false
	}
	return int(whd), true
}

// Width is the number of elements of a row.
func (p *Pitched[T]) Width() int { return p.width }

// Height is the number of rows of a slice.
func (p *Pitched[T]) Height() int { return p.height }

// Depth is the number of slices; 1 for a 2D array.
func (p *Pitched[T]) Depth() int { return p.depth }

// Pitch is the distance in bytes from the start of one row to the next, at least
// Width×sizeof(T).
func (p *Pitched[T]) Pitch() uint64 { return p.pitch }

// Len is the number of elements, Width×Height×Depth (not counting the rows' padding).
func (p *Pitched[T]) Len() int { return p.width * p.height * p.depth }

// Row is row y of slice z, its Width elements without the padding, as device memory for
// copies and kernels. A y or z out of range is an empty Slice that every use refuses.
func (p *Pitched[T]) Row(y, z int) device.Slice {
	if y < 0 || y >= p.height || z < 0 || z >= p.depth {
		return device.Range(p.Buffer, p.Size(), 1) // past the end: refused where used
	}
	off := (uint64(z)*uint64(p.height) + uint64(y)) * p.pitch
	return p.Slice(off, uint64(p.width)*uint64(p.elemSize))
}

// Close frees the array once the work queued on the device so far has finished, and
// returns once it is freed; see device.Buffer.Close.
func (p *Pitched[T]) Close(ctx context.Context) error { return p.mem.Close(ctx) }
