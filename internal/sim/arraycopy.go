package sim

import (
	"fmt"
	"math/bits"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// region3D is one side of a 3D copy, resolved: the bytes of row y of slice z of the box.
type region3D func(y, z uint64) []byte

// muladd is a*b+c, and whether it fits a uint64.
func muladd(a, b, c uint64) (uint64, bool) {
	hi, lo := bits.Mul64(a, b)
	n, carry := bits.Add64(lo, c, 0)
	return n, hi == 0 && carry == 0
}

// inside reports whether [pos, pos+n) lies in [0, size) without overflowing.
func inside(pos, n, size uint64) bool { return pos <= size && n <= size-pos }

// copyElemSize is the element size of a 3D copy: the arrays' (which must agree), or 0 when
// neither side is an array and the extent's width is in bytes.
func copyElemSize(src, dst *simArray) (uint64, string) {
	switch {
	case src != nil && dst != nil && src.elemSize() != dst.elemSize():
		return 0, fmt.Sprintf("the source array's elements are %d bytes and the destination's %d", src.elemSize(), dst.elemSize())
	case src != nil:
		return src.elemSize(), ""
	case dst != nil:
		return dst.elemSize(), ""
	}
	return 0, ""
}

// side3D resolves one side of a 3D copy of ext on device dev: arr is its array (nil for
// pitched memory); es is the copy's element size (0 when no array takes part); rowBytes is
// the bytes of one row of the box. anyDev lets pitched memory be any device's (unified
// addressing). The code and detail say what is wrong, if anything.
//
// When an array takes part, the runtime reads the pitched side's X in the array's elements
// too (it scales both positions by the one element size), not in bytes as the reference
// manual's "unsigned char" elements suggest: the GPU put X 8 of 4-byte elements at byte 32.
func side3D(dev *device, pl backend.Place3D, arr *simArray, es uint64, ext backend.Extent3D, rowBytes uint64, anyDev bool) (region3D, cudaerr.Code, string) {
	if arr != nil {
		w, h, d := arr.dims()
		if !inside(pl.Pos.X, ext.Width, w) || !inside(pl.Pos.Y, ext.Height, h) || !inside(pl.Pos.Z, ext.Depth, d) {
			return nil, cudaerr.InvalidValue, fmt.Sprintf("a box of %d×%d×%d at (%d,%d,%d) is outside the %d×%d×%d array",
				ext.Width, ext.Height, ext.Depth, pl.Pos.X, pl.Pos.Y, pl.Pos.Z, w, h, d)
		}
		data := arr.data
		return func(y, z uint64) []byte {
			off := (((pl.Pos.Z+z)*h+pl.Pos.Y+y)*w + pl.Pos.X) * es
			return data[off : off+rowBytes]
		}, 0, ""
	}
	if pl.Ptr == 0 {
		return nil, cudaerr.InvalidValue, "neither an array nor a device pointer"
	}
	x := pl.Pos.X
	if es != 0 {
		var ok bool
		if x, ok = muladd(pl.Pos.X, es, 0); !ok {
			return nil, cudaerr.InvalidValue, fmt.Sprintf("column %d of %d-byte elements overflows", pl.Pos.X, es)
		}
	}
	if !inside(x, rowBytes, pl.Pitch) {
		return nil, cudaerr.InvalidPitchValue, fmt.Sprintf("rows of %d bytes at byte %d do not fit a pitch of %d", rowBytes, x, pl.Pitch)
	}
	rows := pl.Rows
	if rows == 0 {
		if ext.Depth > 1 || pl.Pos.Z > 0 {
			return nil, cudaerr.InvalidValue, "a 3D box in pitched memory needs its rows per slice"
		}
		rows = pl.Pos.Y + ext.Height
	}
	if !inside(pl.Pos.Y, ext.Height, rows) {
		return nil, cudaerr.InvalidValue, fmt.Sprintf("%d rows at row %d do not fit slices of %d rows", ext.Height, pl.Pos.Y, rows)
	}
	first, ok1 := muladd(pl.Pos.Z, rows, pl.Pos.Y)
	start, ok2 := muladd(first, pl.Pitch, x)
	last, ok3 := muladd(ext.Depth-1, rows, ext.Height-1)
	n, ok4 := muladd(last, pl.Pitch, rowBytes)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil, cudaerr.InvalidValue, "the box's span in pitched memory overflows"
	}
	var buf []byte
	var detail string
	if anyDev {
		buf, detail = dev.resolveAny(pl.Ptr+backend.DevicePtr(start), n)
	} else {
		buf, detail = dev.resolve(pl.Ptr+backend.DevicePtr(start), n)
	}
	if detail != "" {
		return nil, cudaerr.InvalidValue, detail
	}
	pitch := pl.Pitch
	return func(y, z uint64) []byte {
		off := (z*rows + y) * pitch
		return buf[off : off+rowBytes]
	}, 0, ""
}

// copy3D checks a 3D copy from device sd to device dd, queues it on s (a stream of d), and
// there resolves both sides again, so that a side freed meanwhile faults the device.
func (d *device) copy3D(op string, sd, dd *device, p backend.Copy3DParams, s backend.Stream) error {
	if err := d.alive(op); err != nil {
		return err
	}
	st, err := d.ownStream(op, s)
	if err != nil {
		return err
	}
	ext := p.Extent
	if ext.Width == 0 || ext.Height == 0 || ext.Depth == 0 {
		return nil
	}
	peer := sd != d || dd != d
	resolve := func() (region3D, region3D, uint64, cudaerr.Code, string) { return resolve3D(sd, dd, p, peer) }
	if _, _, _, code, detail := resolve(); detail != "" {
		return d.fail(op, code, "3D copy %s", detail)
	}
	d.submit(st, &task{name: "3D copy", run: func() {
		to, from, rowBytes, _, detail := resolve()
		if detail != "" {
			d.setFault(cudaerr.IllegalAddress, "3D copy "+detail)
			return
		}
		for z := range ext.Depth {
			for y := range ext.Height {
				copy(to(y, z)[:rowBytes], from(y, z))
			}
		}
	}})
	return nil
}

// Copy3D copies between arrays and pitched memory on s.
func (d *device) Copy3D(p backend.Copy3DParams, s backend.Stream) error {
	return d.copy3D("cudaMemcpy3DAsync", d, d, p, s)
}

// Copy3DPeer copies from device src's arrays or memory to device dst's on s.
func (d *device) Copy3DPeer(p backend.Copy3DParams, src, dst int, s backend.Stream) error {
	const op = "cudaMemcpy3DPeerAsync"
	dev := func(o int) *device {
		if o < 0 || o >= len(d.b.devices) {
			return nil
		}
		return d.b.devices[o]
	}
	sd, dd := dev(src), dev(dst)
	if sd == nil || dd == nil {
		return d.fail(op, cudaerr.InvalidDevice, "devices %d and %d: the machine has %d", src, dst, len(d.b.devices))
	}
	return d.copy3D(op, sd, dd, p, s)
}

// arrayColumns converts a 2D copy's byte column and width in an array to elements.
func (d *device) arrayColumns(op string, h backend.Array, wOffset, width uint64) (x, w uint64, err error) {
	a, err := d.array(op, h)
	if err != nil {
		return 0, 0, err
	}
	es := a.elemSize()
	if wOffset%es != 0 || width%es != 0 {
		return 0, 0, d.fail(op, cudaerr.InvalidValue, "byte column %d and width %d are not whole %d-byte elements of array %#x", wOffset, width, es, uintptr(h))
	}
	return wOffset / es, width / es, nil
}

// Copy2DToArray copies rows of device memory into an array on s.
func (d *device) Copy2DToArray(a backend.Array, wOffset, hOffset uint64, src backend.DevicePtr, spitch, width, height uint64, s backend.Stream) error {
	const op = "cudaMemcpy2DToArrayAsync"
	x, w, err := d.arrayColumns(op, a, wOffset, width)
	if err != nil {
		return err
	}
	return d.copy3D(op, d, d, backend.Copy3DParams{
		Src:    backend.Place3D{Ptr: src, Pitch: spitch, Rows: height},
		Dst:    backend.Place3D{Array: a, Pos: backend.Pos3D{X: x, Y: hOffset}},
		Extent: backend.Extent3D{Width: w, Height: height, Depth: 1},
	}, s)
}

// Copy2DFromArray copies rows of an array into device memory on s.
func (d *device) Copy2DFromArray(dst backend.DevicePtr, dpitch uint64, a backend.Array, wOffset, hOffset, width, height uint64, s backend.Stream) error {
	const op = "cudaMemcpy2DFromArrayAsync"
	x, w, err := d.arrayColumns(op, a, wOffset, width)
	if err != nil {
		return err
	}
	return d.copy3D(op, d, d, backend.Copy3DParams{
		Src:    backend.Place3D{Array: a, Pos: backend.Pos3D{X: x, Y: hOffset}},
		Dst:    backend.Place3D{Ptr: dst, Pitch: dpitch, Rows: height},
		Extent: backend.Extent3D{Width: w, Height: height, Depth: 1},
	}, s)
}

// Memset3D sets a box of pitched memory on s.
func (d *device) Memset3D(p backend.DevicePtr, pitch, rows uint64, value byte, ext backend.Extent3D, s backend.Stream) error {
	const op = "cudaMemset3DAsync"
	if err := d.alive(op); err != nil {
		return err
	}
	st, err := d.ownStream(op, s)
	if err != nil || ext.Width == 0 || ext.Height == 0 || ext.Depth == 0 {
		return err
	}
	pl := backend.Place3D{Ptr: p, Pitch: pitch, Rows: rows}
	if _, code, detail := side3D(d, pl, nil, 0, ext, ext.Width, false); detail != "" {
		return d.fail(op, code, "3D memset: %s", detail)
	}
	d.submit(st, &task{name: "3D memset", run: func() {
		to, _, detail := side3D(d, pl, nil, 0, ext, ext.Width, false)
		if detail != "" {
			d.setFault(cudaerr.IllegalAddress, "3D memset: "+detail)
			return
		}
		for z := range ext.Depth {
			for y := range ext.Height {
				row := to(y, z)
				for i := range row {
					row[i] = value
				}
			}
		}
	}})
	return nil
}

// resolve3D resolves both sides of the 3D copy p from device sd to device dd: the regions,
// the bytes of one row of the box, or the code and detail of what is wrong. peer copies take
// each side's memory of its own device only; others take any device's (unified addressing).
func resolve3D(sd, dd *device, p backend.Copy3DParams, peer bool) (to, from region3D, rowBytes uint64, code cudaerr.Code, detail string) {
	ext := p.Extent
	var sa, da *simArray
	if p.Src.Array != 0 {
		if sa = sd.lookupArray(p.Src.Array); sa == nil {
			return nil, nil, 0, cudaerr.InvalidResourceHandle, fmt.Sprintf("source array %#x is not a live array of device %d", uintptr(p.Src.Array), sd.ordinal)
		}
	}
	if p.Dst.Array != 0 {
		if da = dd.lookupArray(p.Dst.Array); da == nil {
			return nil, nil, 0, cudaerr.InvalidResourceHandle, fmt.Sprintf("destination array %#x is not a live array of device %d", uintptr(p.Dst.Array), dd.ordinal)
		}
	}
	es, detail := copyElemSize(sa, da)
	if detail != "" {
		return nil, nil, 0, cudaerr.InvalidValue, detail
	}
	rowBytes = ext.Width
	if es != 0 {
		var ok bool
		if rowBytes, ok = muladd(ext.Width, es, 0); !ok {
			return nil, nil, 0, cudaerr.InvalidValue, "the box's row overflows"
		}
	}
	from, code, detail = side3D(sd, p.Src, sa, es, ext, rowBytes, !peer)
	if detail != "" {
		return nil, nil, 0, code, "source: " + detail
	}
	to, code, detail = side3D(dd, p.Dst, da, es, ext, rowBytes, !peer)
	if detail != "" {
		return nil, nil, 0, code, "destination: " + detail
	}
	return to, from, rowBytes, 0, ""
}
