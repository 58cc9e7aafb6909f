package graphs

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Copy3D is a copy of a box between CUDA arrays and pitched device memory (alloc.Array,
// alloc.Pitched) of one device, for a copy node (cudaGraphAddMemcpyNode with a
// cudaMemcpy3DParms): made by CopyPitched, CopyArray, CopyPitchedToArray and
// CopyArrayToPitched, which check the boxes as alloc's stream copies of the same names do.
// The runtime keeps the arrays' handles and the memory's addresses, not the objects: once one
// of them is closed, launches of the graph's Execs are refused with device.ErrClosed.
type Copy3D struct {
	err    error
	dev    *device.Device
	src    side3D
	dst    side3D
	extent backend.Extent3D
}

// side3D is one side of a Copy3D: an array, or pitched memory.
type side3D struct {
	what   string
	array  *alloc.Array
	mem    device.Mem // pitched memory
	closed func() bool
	pitch  uint64
	rows   uint64
	pos    backend.Pos3D
}

// place resolves s for work on d; on the actor thread.
func (s side3D) place(d *core.Device) (backend.Place3D, error) {
	if s.array != nil {
		h, err := (*core.Array)(s.array).Handle(s.what, d)
		return backend.Place3D{Array: h, Pos: s.pos}, err
	}
	p, _, err := d.Resolve(s.what, s.mem)
	return backend.Place3D{Ptr: p, Pitch: s.pitch, Rows: s.rows, Pos: s.pos}, err
}

// held is what a node copying s checks at launch.
func (s side3D) held() held {
	if s.array != nil {
		a := s.array
		return held{key: a, what: "the array of a 3D copy node", alive: func() error {
			if (*core.Array)(a).Closed() {
				return core.Closed("array used after Close")
			}
			return nil
		}}
	}
	return held{key: s.mem, what: "the pitched memory of a 3D copy node", alive: func() error {
		if s.closed() {
			return core.Closed("pitched memory used after Close")
		}
		return nil
	}}
}

// params resolves c for work on d; on the actor thread.
func (c *Copy3D) params(d *core.Device) (backend.Copy3DParams, error) {
	src, err := c.src.place(d)
	if err != nil {
		return backend.Copy3DParams{}, err
	}
	dst, err := c.dst.place(d)
	if err != nil {
		return backend.Copy3DParams{}, err
	}
	return backend.Copy3DParams{Src: src, Dst: dst, Extent: c.extent}, nil
}

// usable checks c for a graph of d.
func (c *Copy3D) usable(d *device.Device) error {
	if c == nil {
		return invalid("nil 3D copy")
	}
	if c.err != nil {
		return c.err
	}
	if c.dev == nil {
		return invalid("an empty 3D copy: make one with CopyPitched, CopyArray, CopyPitchedToArray or CopyArrayToPitched")
	}
	if c.dev != d {
		return wrongDevice("3D copy's memory", c.dev, d)
	}
	return nil
}

// checkBox refuses a box that is empty or reaches outside a w×h×d object, naming both.
func checkBox(what string, b alloc.Box, w, h, d int, outOfRange bool) error {
	if b.W > 0 && b.H > 0 && b.D > 0 && b.X >= 0 && b.Y >= 0 && b.Z >= 0 && b.X <= w-b.W && b.Y <= h-b.H && b.Z <= d-b.D {
		return nil
	}
	format := "%s box of %d×%d×%d at (%d,%d,%d) is empty or outside the %d×%d×%d array"
	if outOfRange {
		return core.OutOfRange(format, what, b.W, b.H, b.D, b.X, b.Y, b.Z, w, h, d)
	}
	return core.Invalid(format, what, b.W, b.H, b.D, b.X, b.Y, b.Z, w, h, d)
}

// norm is b with a zero depth read as 1.
func norm(b alloc.Box) alloc.Box {
	if b.D == 0 {
		b.D = 1
	}
	return b
}

func pos3D(p alloc.Pos) backend.Pos3D {
	return backend.Pos3D{X: uint64(p.X), Y: uint64(p.Y), Z: uint64(p.Z)}
}

// arraySide is box b of a as side what of a copy.
func arraySide(what string, a *alloc.Array, b alloc.Box) (side3D, *device.Device, error) {
	if a == nil || (*core.Array)(a).Device() == nil {
		return side3D{}, nil, invalid("%s is a nil array", what)
	}
	w := a.Whole()
	if err := checkBox(what, b, w.W, w.H, w.D, true); err != nil {
		return side3D{}, nil, err
	}
	return side3D{what: what, array: a, pos: pos3D(b.Pos)}, (*device.Device)((*core.Array)(a).Device()), nil
}

// pitchedSide is box b of p as side what of a copy.
func pitchedSide[T any](what string, p *alloc.Pitched[T], b alloc.Box) (side3D, *device.Device, uint64, error) {
	if p == nil || p.Buffer == nil {
		return side3D{}, nil, 0, invalid("%s is a nil pitched array", what)
	}
	if err := checkBox(what, b, p.Width(), p.Height(), p.Depth(), false); err != nil {
		return side3D{}, nil, 0, err
	}
	es := uint64(unsafe.Sizeof(*new(T)))
	buf := (*core.Buffer)(p.Buffer)
	return side3D{what: what, mem: p, closed: buf.Closed, pitch: p.Pitch(), rows: uint64(p.Height()),
		pos: backend.Pos3D{X: uint64(b.X) * es, Y: uint64(b.Y), Z: uint64(b.Z)}}, p.Buffer.Device(), es, nil
}

// copy3D joins two sides into a Copy3D, or the first error met.
func copy3D(src, dst side3D, sd, dd *device.Device, extent backend.Extent3D, errs ...error) Copy3D {
	for _, err := range errs {
		if err != nil {
			return Copy3D{err: err}
		}
	}
	if sd != dd {
		return Copy3D{err: fmt.Errorf("%w: a 3D copy node copies within one device: the source is of device %d, the destination of device %d",
			device.ErrWrongDevice, sd.Ordinal(), dd.Ordinal())}
	}
	return Copy3D{dev: sd, src: src, dst: dst, extent: extent}
}

func boxExtent(b alloc.Box, widthScale uint64) backend.Extent3D {
	return backend.Extent3D{Width: uint64(b.W) * widthScale, Height: uint64(b.H), Depth: uint64(b.D)}
}

// CopyPitched is a copy of box b of src to the same-sized box of dst at origin at, both
// pitched arrays of one device; a box outside either is an ErrInvalidArgument error naming
// it, as alloc.CopyPitched's.
func CopyPitched[T any](dst *alloc.Pitched[T], at alloc.Pos, src *alloc.Pitched[T], b alloc.Box) Copy3D {
	b = norm(b)
	s, sd, es, err1 := pitchedSide("copy source", src, b)
	d, dd, _, err2 := pitchedSide("copy destination", dst, alloc.Box{Pos: at, W: b.W, H: b.H, D: b.D})
	return copy3D(s, d, sd, dd, boxExtent(b, es), err1, err2)
}

// CopyArray is a copy of box b of src to the same-sized box of dst at origin at, arrays of
// one device with elements of one size; a box outside either is an ErrOutOfRange error, as
// alloc.CopyArray's.
func CopyArray(dst *alloc.Array, at alloc.Pos, src *alloc.Array, b alloc.Box) Copy3D {
	b = norm(b)
	s, sd, err1 := arraySide("copy source", src, b)
	d, dd, err2 := arraySide("copy destination", dst, alloc.Box{Pos: at, W: b.W, H: b.H, D: b.D})
	if err1 == nil && err2 == nil {
		if ds, ss := dst.Format().Size(), src.Format().Size(); ds != ss {
			err1 = invalid("CopyArray from %d-byte to %d-byte elements", ss, ds)
		}
	}
	return copy3D(s, d, sd, dd, boxExtent(b, 1), err1, err2)
}

// CopyPitchedToArray is a copy of the box of src at at, of box b's size, into box b of dst,
// as alloc.CopyPitchedToArray's: T's size must be the array's element size.
func CopyPitchedToArray[T any](dst *alloc.Array, b alloc.Box, src *alloc.Pitched[T], at alloc.Pos) Copy3D {
	b = norm(b)
	d, dd, err1 := arraySide("copy destination", dst, b)
	s, sd, es, err2 := pitchedSide("copy source", src, alloc.Box{Pos: at, W: b.W, H: b.H, D: b.D})
	s.pos.X = uint64(at.X) // with an array in the copy, the runtime reads the pitched X in elements
	return copy3D(s, d, sd, dd, boxExtent(b, 1), err1, err2, sameElem("CopyPitchedToArray", dst, es, err1, err2))
}

// CopyArrayToPitched is a copy of box b of src into the box of dst at at, as
// alloc.CopyArrayToPitched's: T's size must be the array's element size.
func CopyArrayToPitched[T any](dst *alloc.Pitched[T], at alloc.Pos, src *alloc.Array, b alloc.Box) Copy3D {
	b = norm(b)
	s, sd, err1 := arraySide("copy source", src, b)
	d, dd, es, err2 := pitchedSide("copy destination", dst, alloc.Box{Pos: at, W: b.W, H: b.H, D: b.D})
	d.pos.X = uint64(at.X) // with an array in the copy, the runtime reads the pitched X in elements
	return copy3D(s, d, sd, dd, boxExtent(b, 1), err1, err2, sameElem("CopyArrayToPitched", src, es, err1, err2))
}

// sameElem refuses pitched elements of es bytes with array a of another element size, once
// both sides were checked.
func sameElem(op string, a *alloc.Array, es uint64, errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return nil
		}
	}
	if a.Format().Size() != es {
		return invalid("%s between a %s array and a pitched array of %d-byte elements", op, a.Format(), es)
	}
	return nil
}

// holdCopy makes r's launches check c's arrays and memory; on the actor thread.
func (r *resources) holdCopy(c *Copy3D) {
	r.keep(c.src.held())
	r.keep(c.dst.held())
}

// AddCopy3D adds copy node c (cudaGraphAddMemcpyNode) after deps; its memory must be of g's
// device. It returns once added.
func (g *Graph) AddCopy3D(ctx context.Context, deps Deps, c Copy3D) (*Node, error) {
	if g == nil {
		return nil, invalid("nil graph")
	}
	if err := c.usable(g.dev); err != nil {
		return nil, err
	}
	n, err := g.add(ctx, deps, CopyNode, "3D copy", nil, func(rt backend.Device, hs []backend.GraphNode) (backend.GraphNode, error) {
		p, err := c.params(coreDev(g.dev))
		if err != nil {
			return 0, err
		}
		h, err := rt.GraphAddMemcpyNode3D(g.h, hs, p)
		if err == nil {
			g.res.holdCopy(&c)
		}
		return h, err
	})
	return g.known(n, err, func(n *Node) { n.box = &c })
}

// SetCopy3D makes copy node n the copy c (cudaGraphMemcpyNodeSetParams), whatever it copied
// before. Executable graphs made before keep their copy (Exec.SetCopy3D changes theirs).
func (n *Node) SetCopy3D(ctx context.Context, c Copy3D) error {
	if err := n.of(CopyNode); err != nil {
		return err
	}
	if err := c.usable(n.g.dev); err != nil {
		return err
	}
	_, err := onNode(ctx, n, "setting the 3D copy of", []Kind{CopyNode}, func(rt backend.Device) (struct{}, error) {
		p, err := c.params(coreDev(n.g.dev))
		if err != nil {
			return struct{}{}, err
		}
		if err := rt.GraphMemcpyNodeSetParams3D(n.h, p); err != nil {
			return struct{}{}, err
		}
		n.g.res.holdCopy(&c)
		n.g.mu.Lock()
		n.box = &c
		n.g.mu.Unlock()
		return struct{}{}, nil
	})
	return err
}

// SetCopy3D makes copy node n of x the copy c in later launches
// (cudaGraphExecMemcpyNodeSetParams). The runtime takes only 1D copies here: the node's copy
// and c must each be one row of device memory (no array, one row, one slice), else the error
// matches cudaerr.InvalidValue and nothing changes. Exec.Update refuses a changed box or
// array copy too (the runtime's cudaGraphExecUpdateErrorParametersChanged): to move one, set
// the graph's node (Node.SetCopy3D) and instantiate the graph again.
func (x *Exec) SetCopy3D(ctx context.Context, n *Node, c Copy3D) error {
	if x == nil {
		return invalid("nil executable graph")
	}
	if err := c.usable(x.dev); err != nil {
		return err
	}
	return x.setNode(ctx, n, []Kind{CopyNode}, func(rt backend.Device) error {
		p, err := c.params(coreDev(x.dev))
		if err != nil {
			return err
		}
		if err := rt.GraphExecMemcpyNodeSetParams3D(x.h, n.h, p); err != nil {
			return err
		}
		x.res.holdCopy(&c)
		return nil
	})
}

// CopyPlace is one side of a copy node read back: a CUDA array, or pitched device memory.
type CopyPlace struct {
	// Array is the side's array when it is one and was given to the node through gpuactor
	// (nil otherwise; IsArray tells an array apart).
	Array   *alloc.Array
	IsArray bool
	// Ptr, Pitch and Rows are pitched memory's base address, bytes between rows and rows
	// between slices.
	Ptr   cuda.DevicePtr
	Pitch uint64
	Rows  uint64
	// Pos is where the box starts: in elements in an array; in pitched memory X is in bytes,
	// or in elements when an array takes part in the copy (as the runtime reads it).
	Pos alloc.Pos
}

// Copy3DParams is a copy node's box copy read back (cudaGraphMemcpyNodeGetParams): Width is
// in elements when a side is an array, else in bytes.
type Copy3DParams struct {
	Src, Dst             CopyPlace
	Width, Height, Depth uint64
}

// Copy3DParams is copy node n's copy between arrays and device memory, as the runtime holds
// it; a 1D copy between device memory reads as one row. A copy with a host side is an error
// matching cudaerr.NotSupported.
func (n *Node) Copy3DParams(ctx context.Context) (Copy3DParams, error) {
	return onNode(ctx, n, "reading", []Kind{CopyNode}, func(rt backend.Device) (Copy3DParams, error) {
		p, err := rt.GraphMemcpyNodeGetParams3D(n.h)
		if err != nil {
			return Copy3DParams{}, err
		}
		n.g.mu.Lock()
		box := n.box
		n.g.mu.Unlock()
		place := func(pl backend.Place3D, given func(*Copy3D) *alloc.Array) CopyPlace {
			out := CopyPlace{IsArray: pl.Array != 0, Ptr: pl.Ptr, Pitch: pl.Pitch, Rows: pl.Rows,
				Pos: alloc.Pos{X: int(pl.Pos.X), Y: int(pl.Pos.Y), Z: int(pl.Pos.Z)}}
			if out.IsArray && box != nil {
				if a := given(box); a != nil {
					if h, err := (*core.Array)(a).Handle("", nil); err == nil && h == pl.Array {
						out.Array = a
					}
				}
			}
			return out
		}
		return Copy3DParams{
			Src:   place(p.Src, func(c *Copy3D) *alloc.Array { return c.src.array }),
			Dst:   place(p.Dst, func(c *Copy3D) *alloc.Array { return c.dst.array }),
			Width: p.Extent.Width, Height: p.Extent.Height, Depth: p.Extent.Depth,
		}, nil
	})
}
