package remote

import "github.com/gpuactor/gpuactor/internal/backend"

// Copy nodes name host memory by address: the host sides of a copy node's parameters cross
// translated, as the graph copy nodes' do (hostmem.go), so that the worker's node copies the
// memory both processes map and the parent reads back its own addresses. A host side that is
// not HostAlloc's memory is refused with cudaerr.NotSupported; with CopyDefault, a side found
// in no shared region is a device address and crosses as it is.

// hostSides reports which sides of a copy of kind k are host memory, and whether either side
// may be (CopyDefault).
func hostSides(k backend.CopyKind) (dst, src, either bool) {
	dst = k == backend.CopyDeviceToHost || k == backend.CopyHostToHost
	src = k == backend.CopyHostToDevice || k == backend.CopyHostToHost
	return dst, src, k == backend.CopyDefault
}

// toWorker translates the host sides of p to the worker's addresses.
func (d *Device) toWorker(op string, p backend.CopyNode) (backend.CopyNode, error) {
	dstHost, srcHost, either := hostSides(p.Kind)
	for _, side := range []struct {
		addr *uint64
		host bool
	}{{&p.Dst, dstHost}, {&p.Src, srcHost}} {
		if !side.host && !either {
			continue
		}
		reg, off, ok := d.b.host.find(uintptr(*side.addr), p.Bytes)
		switch {
		case ok:
			*side.addr = reg.peer + off
		case side.host:
			return p, refuse(op + " of host memory that is not HostAlloc's")
		}
	}
	return p, nil
}

// toParent translates the host sides of p, as the worker answered them, to this process's
// addresses.
func (d *Device) toParent(p backend.CopyNode) backend.CopyNode {
	dstHost, srcHost, either := hostSides(p.Kind)
	t := &d.b.host
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, side := range []struct {
		addr *uint64
		host bool
	}{{&p.Dst, dstHost}, {&p.Src, srcHost}} {
		if !side.host && !either {
			continue
		}
		for _, r := range t.rs {
			if *side.addr >= r.peer && *side.addr-r.peer < uint64(len(r.mem)) {
				*side.addr = uint64(r.base()) + (*side.addr - r.peer)
				break
			}
		}
	}
	return p
}

// GraphMemcpyNodeGetParams reads a copy node, its host sides in this process's addresses.
func (d *Device) GraphMemcpyNodeGetParams(n backend.GraphNode) (backend.CopyNode, error) {
	e := request(mGraphMemcpyNodeGetParams)
	e.u64(uint64(n))
	r, err := d.do(e)
	if err != nil {
		return backend.CopyNode{}, err
	}
	p := decCopyNode(&r)
	if r.err != nil {
		return backend.CopyNode{}, r.err
	}
	return d.toParent(p), nil
}

// GraphMemcpyNodeSetParams1D makes a copy node a 1D copy, its host sides translated.
func (d *Device) GraphMemcpyNodeSetParams1D(n backend.GraphNode, p backend.CopyNode) error {
	p, err := d.toWorker("GraphMemcpyNodeSetParams1D", p)
	if err != nil {
		return err
	}
	e := request(mGraphMemcpyNodeSetParams1D)
	e.u64(uint64(n))
	encCopyNode(&e, p)
	r, err := d.do(e)
	if err != nil {
		return err
	}
	return r.err
}

// GraphExecMemcpyNodeSetParams1D makes a copy node of x a 1D copy, its host sides translated.
func (d *Device) GraphExecMemcpyNodeSetParams1D(x backend.GraphExec, n backend.GraphNode, p backend.CopyNode) error {
	p, err := d.toWorker("GraphExecMemcpyNodeSetParams1D", p)
	if err != nil {
		return err
	}
	e := request(mGraphExecMemcpyNodeSetParams1D)
	e.u64(uint64(x))
	e.u64(uint64(n))
	encCopyNode(&e, p)
	r, err := d.do(e)
	if err != nil {
		return err
	}
	return r.err
}

// GraphAddMemcpyNode1D adds a 1D copy node, its host sides translated.
func (d *Device) GraphAddMemcpyNode1D(g backend.Graph, deps []backend.GraphNode, p backend.CopyNode) (backend.GraphNode, error) {
	p, err := d.toWorker("GraphAddMemcpyNode1D", p)
	if err != nil {
		return 0, err
	}
	e := request(mGraphAddMemcpyNode1D)
	e.u64(uint64(g))
	encListGraphNode(&e, deps)
	encCopyNode(&e, p)
	return d.addNode(e)
}
