package remote

import "github.com/gpuactor/gpuactor/internal/backend"

// The composite arguments' layouts, each written by one enc method and read by its dec twin.

func (e *enc) nodes(ns []backend.GraphNode) {
	e.u64(uint64(len(ns)))
	for _, n := range ns {
		e.u64(uint64(n))
	}
}

func (d *dec) nodes() []backend.GraphNode {
	n := d.count(8)
	if n == 0 {
		return nil
	}
	out := make([]backend.GraphNode, n)
	for i := range out {
		out[i] = backend.GraphNode(d.u64())
	}
	return out
}

func (e *enc) dim3(v backend.Dim3) { e.u64(uint64(v.X)); e.u64(uint64(v.Y)); e.u64(uint64(v.Z)) }

func (d *dec) dim3() backend.Dim3 { return backend.Dim3{X: d.u32(), Y: d.u32(), Z: d.u32()} }

func (e *enc) args(as []backend.Arg) {
	e.u64(uint64(len(as)))
	for _, a := range as {
		e.u64(uint64(a.Kind))
		e.u64(a.Bits)
	}
}

func (d *dec) args() []backend.Arg {
	n := d.count(16)
	if n == 0 {
		return nil
	}
	out := make([]backend.Arg, n)
	for i := range out {
		out[i] = backend.Arg{Kind: backend.ArgKind(d.u64()), Bits: d.u64()}
	}
	return out
}

func (e *enc) kernelNode(p backend.KernelNode) {
	e.u64(uint64(p.Kernel))
	e.dim3(p.Grid)
	e.dim3(p.Block)
	e.u64(uint64(p.SharedMem))
	e.args(p.Args)
}

func (d *dec) kernelNode() backend.KernelNode {
	return backend.KernelNode{Kernel: backend.Kernel(d.u64()), Grid: d.dim3(), Block: d.dim3(), SharedMem: d.u32(), Args: d.args()}
}

func (e *enc) location(l backend.Location) { e.i64(int64(l.Type)); e.i64(int64(l.ID)) }

func (d *dec) location() backend.Location {
	return backend.Location{Type: backend.LocationType(d.i64()), ID: int32(d.i64())}
}

func (e *enc) handle(h backend.IPCHandle) { e.b = append(e.b, h[:]...) }

func (d *dec) handle() backend.IPCHandle {
	var h backend.IPCHandle
	if len(d.b) < len(h) {
		d.err = errShort
		d.b = nil
		return h
	}
	copy(h[:], d.b)
	d.b = d.b[len(h):]
	return h
}
