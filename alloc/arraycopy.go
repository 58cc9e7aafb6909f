package alloc

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// The copies of arrays are stream operations with futures, as the pitched copies are. Boxes
// are in elements of the array (Box.D 0 reads as 1); every copy is one cudaMemcpy3DAsync (or
// cudaMemcpy2DToArrayAsync / cudaMemcpy2DFromArrayAsync for a 2D box between an array and
// device memory), so the boxes of a copy may be any sub-box. Copies with Go slices stage
// through stream-ordered scratch memory as the pitched copies do, so they work wherever those
// do, isolated devices included.

// checkArrayBox reports a nil array, or a box that is empty or reaches outside it.
func checkArrayBox(what string, a *Array, b Box) error {
	if a == nil || a.core().Device() == nil {
		return core.Invalid("%s is a nil array", what)
	}
	w := a.Whole()
	if b.W <= 0 || b.H <= 0 || b.D <= 0 || b.X < 0 || b.Y < 0 || b.Z < 0 ||
		b.X > w.W-b.W || b.Y > w.H-b.H || b.Z > w.D-b.D {
		return core.OutOfRange("%s box of %d×%d×%d at (%d,%d,%d) is empty or outside the %d×%d×%d array",
			what, b.W, b.H, b.D, b.X, b.Y, b.Z, w.W, w.H, w.D)
	}
	return nil
}

func (b Box) extent() backend.Extent3D {
	return backend.Extent3D{Width: uint64(b.W), Height: uint64(b.H), Depth: uint64(b.D)}
}

func (p Pos) pos() backend.Pos3D {
	return backend.Pos3D{X: uint64(p.X), Y: uint64(p.Y), Z: uint64(p.Z)}
}

// perElem is how many values of T one element of a holds: 1 when T is the element (a float32
// of a float32x1 array), the channel count when T is one channel (a uint8 of an RGBA8
// array). A T that neither fits is an ErrInvalidArgument error.
func perElem[T any](op string, a *Array) (int, error) {
	size := unsafe.Sizeof(*new(T))
	es := uintptr(a.Format().Size())
	if size == 0 || es%size != 0 {
		return 0, core.Invalid("%s: %d-byte values do not make up the %d-byte elements of a %s array", op, size, es, a.Format())
	}
	return int(es / size), nil
}

// CopyToArray queues a copy of src, b.W×b.H×b.D elements in tightly packed rows, into box b
// of dst; the future completes when dst holds them. A value of src is an element of the
// array or one channel of it (a []uint8 fills an RGBA8 array, 4 values an element). src
// goes through the staging pool into stream-ordered scratch memory, and from there into the
// box with one 3D copy. The caller may reuse src once CopyToArray has returned. A len(src)
// other than the box's is an ErrInvalidArgument error; a box outside the array,
// ErrOutOfRange.
func CopyToArray[T cuda.Numeric](ctx context.Context, s *streams.Stream, dst *Array, b Box, src []T) *streams.Future {
	return hostArray(ctx, "CopyToArray", s, dst, b, src, true)
}

// CopyFromArray queues a copy of box b of src into dst, b.W×b.H×b.D elements in tightly
// packed rows; the future completes when dst holds them (read dst only then). Values are as
// for CopyToArray.
func CopyFromArray[T cuda.Numeric](ctx context.Context, s *streams.Stream, dst []T, src *Array, b Box) *streams.Future {
	return hostArray(ctx, "CopyFromArray", s, src, b, dst, false)
}

func hostArray[T cuda.Numeric](ctx context.Context, op string, s *streams.Stream, a *Array, b Box, host []T, up bool) *streams.Future {
	if s == nil {
		return failedFuture(core.Invalid("%s on a nil stream", op))
	}
	b = b.norm()
	if err := checkArrayBox(op, a, b); err != nil {
		return failedFuture(err)
	}
	k, err := perElem[T](op, a)
	if err != nil {
		return failedFuture(err)
	}
	n, ok := volume(b.W, b.H, b.D)
	if !ok || n > len(host)/k || len(host) != n*k {
		return failedFuture(core.Invalid("%s: a Go slice of %d values for a %d×%d×%d box of %d elements of %d values", op, len(host), b.W, b.H, b.D, n, k))
	}
	scratch, alloced, err := MallocAsync[T](ctx, s, len(host))
	if err != nil {
		return failedFuture(err)
	}
	rowBytes := uint64(b.W) * a.Format().Size()
	cs := (*core.Stream)(s)
	d := cs.Device()
	// move is queued after the upload's staging copy, or before the download's.
	move := func() *streams.Future {
		return core.Queue(ctx, cs, func(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
			ah, err := a.core().Handle(op, d)
			if err != nil {
				return err
			}
			sp, _, err := d.Resolve(op+" scratch", scratch)
			if err != nil {
				return err
			}
			packed := backend.Place3D{Ptr: sp, Pitch: rowBytes, Rows: uint64(b.H)}
			arr := backend.Place3D{Array: ah, Pos: b.Pos.pos()}
			if up {
				return rt.Copy3D(backend.Copy3DParams{Src: packed, Dst: arr, Extent: b.extent()}, h)
			}
			return rt.Copy3D(backend.Copy3DParams{Src: arr, Dst: packed, Extent: b.extent()}, h)
		})
	}
	fs := []*streams.Future{alloced}
	if up {
		fs = append(fs, streams.CopyToDevice(ctx, s, scratch, host), move())
	} else {
		fs = append(fs, move(), streams.CopyFromDevice(ctx, s, host, scratch))
	}
	fs = append(fs, scratch.CloseOn(ctx, s))
	return join(fs)
}

// CopyArray queues a copy of box b of src into the same-sized box of dst at origin at; the
// future completes when the GPU has done it. The arrays' elements must be of one size. Both
// arrays may live on the stream's device, or one of them on another device: a peer copy
// (cudaMemcpy3DPeerAsync) where both are of one machine (not isolated devices, whose arrays
// live in their own worker processes: that is an ErrWrongDevice error). For a peer copy the
// other device's array must stay open until the future completes; order the copy after that
// device's writes with events.
func CopyArray(ctx context.Context, s *streams.Stream, dst *Array, at Pos, src *Array, b Box) *streams.Future {
	const op = "CopyArray"
	if s == nil {
		return failedFuture(core.Invalid("%s on a nil stream", op))
	}
	b = b.norm()
	if err := checkArrayBox("copy source", src, b); err != nil {
		return failedFuture(err)
	}
	if err := checkArrayBox("copy destination", dst, Box{Pos: at, W: b.W, H: b.H, D: b.D}); err != nil {
		return failedFuture(err)
	}
	if ds, ss := dst.Format().Size(), src.Format().Size(); ds != ss {
		return failedFuture(core.Invalid("%s from %d-byte to %d-byte elements", op, ss, ds))
	}
	cs := (*core.Stream)(s)
	d := cs.Device()
	sd, dd := src.core().Device(), dst.core().Device()
	if sd != d && dd != d {
		return failedFuture(core.WrongDevice(op+" arrays", sd, d))
	}
	if !core.SameMachine(sd, dd) {
		// Each isolated device's arrays live in its own worker process.
		return failedFuture(fmt.Errorf("%w: %s from device %d (%s) to device %d (%s): the devices belong to different backends",
			device.ErrWrongDevice, op, sd.Ordinal(), sd.BackendName(), dd.Ordinal(), dd.BackendName()))
	}
	return core.Queue(ctx, cs, func(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
		sh, err := src.core().Handle("copy source", nil)
		if err != nil {
			return err
		}
		dh, err := dst.core().Handle("copy destination", nil)
		if err != nil {
			return err
		}
		p := backend.Copy3DParams{Src: backend.Place3D{Array: sh, Pos: b.Pos.pos()}, Dst: backend.Place3D{Array: dh, Pos: at.pos()}, Extent: b.extent()}
		if sd != dd {
			return rt.Copy3DPeer(p, sd.Ordinal(), dd.Ordinal(), h)
		}
		return rt.Copy3D(p, h)
	})
}

// place is p from position at as the pitched side of a 3D copy with an array, p's base
// address being base. X stays in elements: with an array in the copy, the runtime scales the
// pitched side's X by the array's element size as it does the array's.
func (p *Pitched[T]) place(base backend.DevicePtr, at Pos) backend.Place3D {
	return backend.Place3D{Ptr: base, Pitch: p.pitch, Rows: uint64(p.height), Pos: at.pos()}
}

// pitchedArray queues the 3D copy between box b of an array and the box at at of p.
func pitchedArray[T any](ctx context.Context, op string, s *streams.Stream, a *Array, b Box, p *Pitched[T], at Pos, toArray bool) *streams.Future {
	if s == nil {
		return failedFuture(core.Invalid("%s on a nil stream", op))
	}
	b = b.norm()
	if err := checkArrayBox(op, a, b); err != nil {
		return failedFuture(err)
	}
	if err := p.check(op, Box{Pos: at, W: b.W, H: b.H, D: b.D}); err != nil {
		return failedFuture(err)
	}
	if es := a.Format().Size(); es != uint64(p.elemSize) {
		return failedFuture(core.Invalid("%s between a %s array and a pitched array of %d-byte elements", op, a.Format(), p.elemSize))
	}
	cs := (*core.Stream)(s)
	d := cs.Device()
	return core.Queue(ctx, cs, func(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
		ah, err := a.core().Handle(op+" array", d)
		if err != nil {
			return err
		}
		pp, _, err := d.Resolve(op+" pitched array", p)
		if err != nil {
			return err
		}
		arr, pl := backend.Place3D{Array: ah, Pos: b.Pos.pos()}, p.place(pp, at)
		if toArray {
			return rt.Copy3D(backend.Copy3DParams{Src: pl, Dst: arr, Extent: b.extent()}, h)
		}
		return rt.Copy3D(backend.Copy3DParams{Src: arr, Dst: pl, Extent: b.extent()}, h)
	})
}

// CopyPitchedToArray queues a copy of the box of src at at, of box b's size, into box b of
// dst (cudaMemcpy3DAsync); the future completes when the GPU has done it. T's size must be
// the array's element size.
func CopyPitchedToArray[T any](ctx context.Context, s *streams.Stream, dst *Array, b Box, src *Pitched[T], at Pos) *streams.Future {
	return pitchedArray(ctx, "CopyPitchedToArray", s, dst, b, src, at, true)
}

// CopyArrayToPitched queues a copy of box b of src into the box of dst at at
// (cudaMemcpy3DAsync); the future completes when the GPU has done it. T's size must be the
// array's element size.
func CopyArrayToPitched[T any](ctx context.Context, s *streams.Stream, dst *Pitched[T], at Pos, src *Array, b Box) *streams.Future {
	return pitchedArray(ctx, "CopyArrayToPitched", s, src, b, dst, at, false)
}

// deviceArray queues the copy between box b of an array and device memory m holding the box
// in tightly packed rows: a box of a 1D or 2D array through cudaMemcpy2DToArrayAsync or
// cudaMemcpy2DFromArrayAsync, one of a 3D, layered or cubemap array through
// cudaMemcpy3DAsync.
func deviceArray(ctx context.Context, op string, s *streams.Stream, a *Array, b Box, m device.Mem, toArray bool) *streams.Future {
	if s == nil {
		return failedFuture(core.Invalid("%s on a nil stream", op))
	}
	b = b.norm()
	if err := checkArrayBox(op, a, b); err != nil {
		return failedFuture(err)
	}
	es := a.Format().Size()
	rowBytes := uint64(b.W) * es
	n, _ := volume(b.W, b.H, b.D)
	need := uint64(n) * es
	cs := (*core.Stream)(s)
	d := cs.Device()
	return core.Queue(ctx, cs, func(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
		ah, err := a.core().Handle(op+" array", d)
		if err != nil {
			return err
		}
		p, size, err := d.Resolve(op+" device memory", m)
		if err != nil {
			return err
		}
		if size != need {
			return core.Invalid("%s: %d bytes of device memory for a %d×%d×%d box of %d bytes", op, size, b.W, b.H, b.D, need)
		}
		if a.Extent().D == 0 { // a 1D or 2D array: the runtime's 2D array copies reach it
			col := uint64(b.X) * es
			if toArray {
				return rt.Copy2DToArray(ah, col, uint64(b.Y), p, rowBytes, rowBytes, uint64(b.H), h)
			}
			return rt.Copy2DFromArray(p, rowBytes, ah, col, uint64(b.Y), rowBytes, uint64(b.H), h)
		}
		packed := backend.Place3D{Ptr: p, Pitch: rowBytes, Rows: uint64(b.H)}
		arr := backend.Place3D{Array: ah, Pos: b.Pos.pos()}
		if toArray {
			return rt.Copy3D(backend.Copy3DParams{Src: packed, Dst: arr, Extent: b.extent()}, h)
		}
		return rt.Copy3D(backend.Copy3DParams{Src: arr, Dst: packed, Extent: b.extent()}, h)
	})
}

// CopyDeviceToArray queues a copy of src, device memory holding box b's elements in tightly
// packed rows (exactly b.W×b.H×b.D elements' bytes), into box b of dst; the future completes
// when the GPU has done it.
func CopyDeviceToArray(ctx context.Context, s *streams.Stream, dst *Array, b Box, src device.Mem) *streams.Future {
	return deviceArray(ctx, "CopyDeviceToArray", s, dst, b, src, true)
}

// CopyArrayToDevice queues a copy of box b of src into dst, device memory of exactly the
// box's bytes, in tightly packed rows; the future completes when the GPU has done it.
func CopyArrayToDevice(ctx context.Context, s *streams.Stream, dst device.Mem, src *Array, b Box) *streams.Future {
	return deviceArray(ctx, "CopyArrayToDevice", s, src, b, dst, false)
}
