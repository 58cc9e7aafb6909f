package sim

import (
	"fmt"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// 3D copy nodes: the box copies Copy3D queues, as graph nodes. The sides are checked when the
// node is added or set, and resolved again at each launch: an array or memory freed meanwhile
// faults the device, as the stream's copy does.

// checkCopy3D checks the 3D copy p on d now, as the runtime does.
func (d *device) checkCopy3D(op string, p backend.Copy3DParams) error {
	if p.Extent.Width == 0 || p.Extent.Height == 0 || p.Extent.Depth == 0 {
		return d.fail(op, cudaerr.InvalidValue, "3D copy node of an empty box (%d×%d×%d)", p.Extent.Width, p.Extent.Height, p.Extent.Depth)
	}
	if _, _, _, code, detail := resolve3D(d, d, p, false); detail != "" {
		return d.fail(op, code, "3D copy node %s", detail)
	}
	return nil
}

// copy3DWork is a 3D copy node's work at launch.
func (d *device) copy3DWork(p backend.Copy3DParams) func() {
	return func() {
		to, from, rowBytes, _, detail := resolve3D(d, d, p, false)
		if detail != "" {
			d.setFault(cudaerr.IllegalAddress, "3D copy node "+detail)
			return
		}
		for z := range p.Extent.Depth {
			for y := range p.Extent.Height {
				copy(to(y, z)[:rowBytes], from(y, z))
			}
		}
	}
}

// setCopy3D gives n the copy p; the caller holds gs.mu.
func (d *device) setCopy3D(n *snode, p backend.Copy3DParams) {
	n.c3, n.cp, n.run = &p, nil, d.copy3DWork(p)
	n.label = fmt.Sprintf("3D copy of %d×%d×%d", p.Extent.Width, p.Extent.Height, p.Extent.Depth)
}

// GraphAddMemcpyNode3D adds a 3D copy node between arrays and pitched memory of d.
func (d *device) GraphAddMemcpyNode3D(g backend.Graph, deps []backend.GraphNode, p backend.Copy3DParams) (backend.GraphNode, error) {
	const op = "cudaGraphAddMemcpyNode"
	if err := d.checkCopy3D(op, p); err != nil {
		return 0, err
	}
	n := &snode{typ: backend.NodeMemcpy}
	d.setCopy3D(n, p)
	return d.addNode(op, g, deps, n)
}

// GraphMemcpyNodeGetParams3D is a copy node's parameters as a device-side 3D copy: a 3D copy
// node's, or a device-to-device 1D copy's as one row.
func (d *device) GraphMemcpyNodeGetParams3D(h backend.GraphNode) (backend.Copy3DParams, error) {
	const op = "cudaGraphMemcpyNodeGetParams"
	var out backend.Copy3DParams
	err := d.withNode(op, h, backend.NodeMemcpy, func(n *snode) error {
		switch {
		case n.c3 != nil:
			out = *n.c3
		case n.cp != nil && n.cp.Kind == backend.CopyDeviceToDevice:
			c := n.cp
			out = backend.Copy3DParams{
				Src:    backend.Place3D{Ptr: backend.DevicePtr(c.Src), Pitch: c.Bytes, Rows: 1},
				Dst:    backend.Place3D{Ptr: backend.DevicePtr(c.Dst), Pitch: c.Bytes, Rows: 1},
				Extent: backend.Extent3D{Width: c.Bytes, Height: 1, Depth: 1},
			}
		default:
			return d.fail(op, cudaerr.NotSupported, "copy node %#x is not a copy between arrays and device memory (a host side, or captured copies, which are not simulated as such)", uintptr(h))
		}
		return nil
	})
	return out, err
}

// GraphMemcpyNodeSetParams3D makes a copy node the 3D copy p.
func (d *device) GraphMemcpyNodeSetParams3D(h backend.GraphNode, p backend.Copy3DParams) error {
	const op = "cudaGraphMemcpyNodeSetParams"
	if err := d.checkCopy3D(op, p); err != nil {
		return err
	}
	return d.withNode(op, h, backend.NodeMemcpy, func(n *snode) error {
		d.setCopy3D(n, p)
		return nil
	})
}

// GraphExecMemcpyNodeSetParams3D makes a copy node of x the copy p for later launches. As
// the runtime documents, both the node's copy and p must be 1D (one row of device memory, no
// array) and keep their memory's mapping: change a box copy through GraphExecUpdate.
func (d *device) GraphExecMemcpyNodeSetParams3D(x backend.GraphExec, h backend.GraphNode, p backend.Copy3DParams) error {
	const op = "cudaGraphExecMemcpyNodeSetParams"
	if err := d.checkCopy3D(op, p); err != nil {
		return err
	}
	if multidim(p) {
		return d.fail(op, cudaerr.InvalidValue, "a %d×%d×%d copy%s: an executable graph's copy node takes 1D copies only", p.Extent.Width, p.Extent.Height, p.Extent.Depth, arraysNamed(p))
	}
	return d.withExecNode(op, x, h, backend.NodeMemcpy, func(n *snode) error {
		if n.cp != nil && n.cp.Kind != backend.CopyDeviceToDevice {
			return d.fail(op, cudaerr.InvalidValue, "copy node %#x copies %s: an executable graph's copy keeps its memory's mapping", uintptr(h), copyKindName(n.cp.Kind))
		}
		if n.c3 != nil && multidim(*n.c3) {
			return d.fail(op, cudaerr.InvalidValue, "copy node %#x was instantiated with a multidimensional copy: an executable graph's copy node takes 1D copies only", uintptr(h))
		}
		if n.cp == nil && n.c3 == nil {
			return d.fail(op, cudaerr.InvalidValue, "copy node %#x was captured from a stream: not a 1D copy the simulator can change", uintptr(h))
		}
		d.setCopy3D(n, p)
		return nil
	})
}

// multidim reports whether p has an array side or more than one row.
func multidim(p backend.Copy3DParams) bool {
	return p.Src.Array != 0 || p.Dst.Array != 0 || p.Extent.Height > 1 || p.Extent.Depth > 1
}

// changedMultidim reports whether an update would change a copy node with an array side or
// a box of more than one row: the runtime refuses that (cudaGraphExecUpdateErrorParametersChanged).
func changedMultidim(old, now *backend.Copy3DParams) bool {
	if (old == nil || !multidim(*old)) && (now == nil || !multidim(*now)) {
		return false
	}
	return old == nil || now == nil || *old != *now
}

func arraysNamed(p backend.Copy3DParams) string {
	if p.Src.Array != 0 || p.Dst.Array != 0 {
		return " with an array side"
	}
	return ""
}

// copySides names the memory types of a copy node's sides ("" for a node the simulator
// does not know the sides of: captured), which an update cannot change.
func copySides(n *snode) string {
	side := func(pl backend.Place3D) string {
		if pl.Array != 0 {
			return "array"
		}
		return "device"
	}
	switch {
	case n.c3 != nil:
		return side(n.c3.Src) + " to " + side(n.c3.Dst)
	case n.cp != nil && n.cp.Kind == backend.CopyDeviceToDevice:
		return "device to device"
	case n.cp != nil:
		return copyKindName(n.cp.Kind)
	}
	return ""
}

// copyKindName names a copy kind in errors.
func copyKindName(k backend.CopyKind) string {
	switch k {
	case backend.CopyHostToHost:
		return "host to host"
	case backend.CopyHostToDevice:
		return "host to device"
	case backend.CopyDeviceToHost:
		return "device to host"
	case backend.CopyDeviceToDevice:
		return "device to device"
	case backend.CopyDefault:
		return "between addresses the runtime tells apart"
	}
	return "of an unknown kind"
}
