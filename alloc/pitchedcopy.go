package alloc

import (
	"context"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// Pos is an element's position in a pitched array: column X, row Y, slice Z.
type Pos struct{ X, Y, Z int }

// Box is a sub-array of a pitched array: W×H×D elements from the origin Pos. A 2D box has
// D 1 (or 0, read as 1).
type Box struct {
	Pos
	W, H, D int
}

// Whole is the box of all of p.
func (p *Pitched[T]) Whole() Box { return Box{W: p.width, H: p.height, D: p.depth} }

// norm is b with a zero depth read as 1.
func (b Box) norm() Box {
	if b.D == 0 {
		b.D = 1
	}
	return b
}

// check reports a box that is empty or reaches outside p, naming both.
func (p *Pitched[T]) check(what string, b Box) error {
	if p == nil {
		return core.Invalid("%s is a nil pitched array", what)
	}
	if b.W <= 0 || b.H <= 0 || b.D <= 0 || b.X < 0 || b.Y < 0 || b.Z < 0 ||
		b.X > p.width-b.W || b.Y > p.height-b.H || b.Z > p.depth-b.D {
		return core.Invalid("%s box of %d×%d×%d at (%d,%d,%d) is empty or outside the %d×%d×%d array",
			what, b.W, b.H, b.D, b.X, b.Y, b.Z, p.width, p.height, p.depth)
	}
	return nil
}

// plane is one 2D operation's view of a pitched region: its start, pitch and rows.
type plane struct {
	ptr   backend.DevicePtr
	pitch uint64
}

// at is the plane of p's slice z, at box b's origin, relative to p's base address base.
func (p *Pitched[T]) at(base backend.DevicePtr, b Box, z int) plane {
	off := (uint64(b.Z+z)*uint64(p.height)+uint64(b.Y))*p.pitch + uint64(b.X)*uint64(p.elemSize)
	return plane{base + backend.DevicePtr(off), p.pitch}
}

// copyBoxes queues the 2D copies of a box of width bytes and h rows in d slices from src to
// dst: one copy of all h×d rows where both sides' slices follow each other without a gap
// (whole-height boxes), else one per slice.
func copyBoxes(rt backend.Device, h backend.Stream, dst, src func(z int) plane, merged bool, width uint64, rows, depth int) error {
	if merged {
		d, s := dst(0), src(0)
		return rt.Copy2DDtoD(d.ptr, d.pitch, s.ptr, s.pitch, width, uint64(rows*depth), h)
	}
	for z := range depth {
		d, s := dst(z), src(z)
		if err := rt.Copy2DDtoD(d.ptr, d.pitch, s.ptr, s.pitch, width, uint64(rows), h); err != nil {
			return err
		}
	}
	return nil
}

// CopyPitched queues a copy of box b of src to the same-sized box of dst at origin at; the
// future completes when the GPU has done it. Both arrays live on the stream's device (peer
// copies of pitched arrays are not carried). A box outside either array is an
// ErrInvalidArgument error naming it.
func CopyPitched[T any](ctx context.Context, s *streams.Stream, dst *Pitched[T], at Pos, src *Pitched[T], b Box) *streams.Future {
	if s == nil {
		return failedFuture(core.Invalid("CopyPitched on a nil stream"))
	}
	b = b.norm()
	if err := src.check("copy source", b); err != nil {
		return failedFuture(err)
	}
	db := Box{Pos: at, W: b.W, H: b.H, D: b.D}
	if err := dst.check("copy destination", db); err != nil {
		return failedFuture(err)
	}
	cs := (*core.Stream)(s)
	d := cs.Device()
	return core.Queue(ctx, cs, func(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
		dp, _, err := d.Resolve("copy destination", dst)
		if err != nil {
			return err
		}
		sp, _, err := d.Resolve("copy source", src)
		if err != nil {
			return err
		}
		merged := b.H == src.height && b.H == dst.height
		return copyBoxes(rt, h, func(z int) plane { return dst.at(dp, db, z) }, func(z int) plane { return src.at(sp, b, z) },
			merged, uint64(b.W)*uint64(src.elemSize), b.H, b.D)
	})
}

// MemsetPitched queues setting every byte of box b of dst to value (cudaMemset2DAsync when
// b spans whole slices, else cudaMemset3DAsync); the future completes when it is done.
func MemsetPitched[T any](ctx context.Context, s *streams.Stream, dst *Pitched[T], b Box, value byte) *streams.Future {
	if s == nil {
		return failedFuture(core.Invalid("MemsetPitched on a nil stream"))
	}
	b = b.norm()
	if err := dst.check("memset destination", b); err != nil {
		return failedFuture(err)
	}
	cs := (*core.Stream)(s)
	d := cs.Device()
	width := uint64(b.W) * uint64(dst.elemSize)
	return core.Queue(ctx, cs, func(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
		p, _, err := d.Resolve("memset destination", dst)
		if err != nil {
			return err
		}
		if b.H == dst.height {
			pl := dst.at(p, b, 0)
			return rt.Memset2D(pl.ptr, pl.pitch, value, width, uint64(b.H*b.D), h)
		}
		pl := dst.at(p, b, 0)
		return rt.Memset3D(pl.ptr, pl.pitch, uint64(dst.height), value, backend.Extent3D{Width: width, Height: uint64(b.H), Depth: uint64(b.D)}, h)
	})
}

// CopyToPitched queues a copy of src, b.W×b.H×b.D elements in tightly packed rows, into box
// b of dst; the future completes when dst holds them. src goes through the device's pinned
// staging pool (as streams.CopyToDevice) into stream-ordered scratch memory, and from there
// into the box with one 2D copy per slice. The caller may reuse src once CopyToPitched has
// returned. A len(src) other than the box's volume is an ErrInvalidArgument error.
func CopyToPitched[T cuda.Numeric](ctx context.Context, s *streams.Stream, dst *Pitched[T], b Box, src []T) *streams.Future {
	return hostPitched(ctx, "CopyToPitched", s, dst, b, src, true)
}

// CopyFromPitched queues a copy of box b of src into dst, b.W×b.H×b.D elements in tightly
// packed rows; the future completes when dst holds them (read dst only then). The box is
// copied into stream-ordered scratch memory and from there through the staging pool (as
// streams.CopyFromDevice). A len(dst) other than the box's volume is an ErrInvalidArgument
// error.
func CopyFromPitched[T cuda.Numeric](ctx context.Context, s *streams.Stream, dst []T, src *Pitched[T], b Box) *streams.Future {
	return hostPitched(ctx, "CopyFromPitched", s, src, b, dst, false)
}

// hostPitched is CopyToPitched (up) and CopyFromPitched: the host side is staged by the
// stream's flat copies into packed scratch memory, which a 2D copy per slice moves into or
// out of the box.
func hostPitched[T cuda.Numeric](ctx context.Context, op string, s *streams.Stream, p *Pitched[T], b Box, host []T, up bool) *streams.Future {
	if s == nil {
		return failedFuture(core.Invalid("%s on a nil stream", op))
	}
	b = b.norm()
	if err := p.check(op, b); err != nil {
		return failedFuture(err)
	}
	n, _ := volume(b.W, b.H, b.D)
	if len(host) != n {
		return failedFuture(core.Invalid("%s: a Go slice of %d elements for a %d×%d×%d box of %d", op, len(host), b.W, b.H, b.D, n))
	}
	scratch, alloced, err := MallocAsync[T](ctx, s, n)
	if err != nil {
		return failedFuture(err)
	}
	rowBytes := uint64(b.W) * uint64(p.elemSize)
	packed := func(base backend.DevicePtr) func(z int) plane {
		return func(z int) plane {
			return plane{base + backend.DevicePtr(uint64(z)*uint64(b.H)*rowBytes), rowBytes}
		}
	}
	cs := (*core.Stream)(s)
	d := cs.Device()
	move := func() *streams.Future {
		return core.Queue(ctx, cs, func(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
			pp, _, err := d.Resolve(op, p)
			if err != nil {
				return err
			}
			sp, _, err := d.Resolve(op+" scratch", scratch)
			if err != nil {
				return err
			}
			box := func(z int) plane { return p.at(pp, b, z) }
			merged := b.H == p.height
			if up {
				return copyBoxes(rt, h, box, packed(sp), merged, rowBytes, b.H, b.D)
			}
			return copyBoxes(rt, h, packed(sp), box, merged, rowBytes, b.H, b.D)
		})
	}
	var fs []*streams.Future
	fs = append(fs, alloced)
	if up {
		fs = append(fs, streams.CopyToDevice(ctx, s, scratch, host), move())
	} else {
		fs = append(fs, move(), streams.CopyFromDevice(ctx, s, host, scratch))
	}
	fs = append(fs, scratch.CloseOn(ctx, s))
	return join(fs)
}

// join is the future of fs together: it completes when all have, with the first error.
func join(fs []*streams.Future) *streams.Future {
	pr := actor.NewPromise[struct{}]()
	go func() {
		var first error
		for _, f := range fs {
			if err := f.Wait(context.Background()); err != nil && first == nil {
				first = err
			}
		}
		pr.Complete(struct{}{}, first)
	}()
	return pr.Future()
}

func failedFuture(err error) *streams.Future { return actor.Completed(struct{}{}, err) }
