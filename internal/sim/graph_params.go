package sim

import (
	"encoding/binary"
	"fmt"
	"slices"
	"unsafe"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Per-kind node parameters: reading and changing one node of a graph, or the node's copy in
// an executable graph (a private snode that answers to the graph node's handle). A change to
// an executable graph's node applies to launches after it, as the plan of a launch is taken
// when it is queued.

// nodeLocked looks up a live node of a graph of d and checks its type; the caller holds
// gs.mu.
func (d *device) nodeLocked(op string, h backend.GraphNode, want backend.NodeType) (*snode, error) {
	n := d.graphs.nodes[h]
	if n == nil {
		return nil, d.fail(op, cudaerr.InvalidValue, "node %#x is not a live node of a graph of device %d", uintptr(h), d.ordinal)
	}
	if n.typ != want {
		return nil, d.fail(op, cudaerr.InvalidValue, "node %#x is a %s node, not a %s node", uintptr(h), n.typ, want)
	}
	return n, nil
}

// execNodeLocked looks up the node of executable graph x answering to h and checks its type;
// the caller holds gs.mu.
func (d *device) execNodeLocked(op string, x backend.GraphExec, h backend.GraphNode, want backend.NodeType) (*snode, error) {
	e, err := d.execLocked(op, x)
	if err != nil {
		return nil, err
	}
	n := e.byOrig[h]
	if n == nil {
		return nil, d.fail(op, cudaerr.InvalidValue, "node %#x is not a node of the graph executable %#x was made from", uintptr(h), uintptr(x))
	}
	if n.typ != want {
		return nil, d.fail(op, cudaerr.InvalidValue, "node %#x is a %s node, not a %s node", uintptr(h), n.typ, want)
	}
	return n, nil
}

// withNode runs f on node h of a graph, of type want, under gs.mu.
func (d *device) withNode(op string, h backend.GraphNode, want backend.NodeType, f func(n *snode) error) error {
	if err := d.alive(op); err != nil {
		return err
	}
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	n, err := d.nodeLocked(op, h, want)
	if err != nil {
		return err
	}
	return f(n)
}

// withExecNode runs f on the node of x answering to h, of type want, under gs.mu.
func (d *device) withExecNode(op string, x backend.GraphExec, h backend.GraphNode, want backend.NodeType, f func(n *snode) error) error {
	if err := d.alive(op); err != nil {
		return err
	}
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	n, err := d.execNodeLocked(op, x, h, want)
	if err != nil {
		return err
	}
	return f(n)
}

// GraphKernelNodeSetParams changes a kernel node's kernel, shape and arguments; its launch
// attributes stay.
func (d *device) GraphKernelNodeSetParams(h backend.GraphNode, p backend.KernelNode) error {
	const op = "cudaGraphKernelNodeSetParams"
	k, err := d.graphKernel(op, p)
	if err != nil {
		return err
	}
	return d.withNode(op, h, backend.NodeKernel, func(n *snode) error {
		p.Args = slices.Clone(p.Args)
		p.Attrs = n.params.Attrs
		n.kern, n.params, n.label = k, p, k.label
		return nil
	})
}

// hostSpan is n bytes of page-locked host memory at addr, or why there are none.
func (d *device) hostSpan(addr, n uint64) ([]byte, string) {
	h := &d.b.host
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.findLocked(uintptr(addr))
	if r == nil {
		return nil, fmt.Sprintf("host address %#x is not page-locked memory", addr)
	}
	off := addr - uint64(r.base)
	if n > r.size-off {
		return nil, fmt.Sprintf("%d bytes at host address %#x run past the end of its %d-byte page-locked range", n, addr, r.size)
	}
	if r.buf != nil {
		return r.buf[off : off+n : off+n], ""
	}
	return unsafe.Slice((*byte)(unsafe.Add(r.keep, off)), n), ""
}

// copySide resolves one side of a copy node: host memory, device memory of any device, or
// (with CopyDefault) whichever the address is.
func (d *device) copySide(addr, n uint64, host, either bool) ([]byte, string) {
	if host || either {
		if b, detail := d.hostSpan(addr, n); detail == "" || !either {
			return b, detail
		}
	}
	return d.resolveAny(backend.DevicePtr(addr), n)
}

// checkCopyNode checks a copy node's parameters now, as the runtime does.
func (d *device) checkCopyNode(op string, p backend.CopyNode) error {
	if p.Bytes == 0 {
		return d.fail(op, cudaerr.InvalidValue, "copy node of 0 bytes")
	}
	if p.Kind < backend.CopyHostToHost || p.Kind > backend.CopyDefault {
		return d.fail(op, cudaerr.InvalidMemcpyDirection, "copy kind %d is not a cudaMemcpyKind", p.Kind)
	}
	dstHost := p.Kind == backend.CopyDeviceToHost || p.Kind == backend.CopyHostToHost
	srcHost := p.Kind == backend.CopyHostToDevice || p.Kind == backend.CopyHostToHost
	either := p.Kind == backend.CopyDefault
	for _, side := range []struct {
		name string
		addr uint64
		host bool
	}{{"destination", p.Dst, dstHost}, {"source", p.Src, srcHost}} {
		if _, detail := d.copySide(side.addr, p.Bytes, side.host, either); detail != "" &&
			(side.host || !d.graphAddr(backend.DevicePtr(side.addr), p.Bytes)) {
			return d.fail(op, cudaerr.InvalidValue, "copy node %s: %s", side.name, detail)
		}
	}
	return nil
}

// copyWork is a copy node's work at launch: the memory is resolved then, as it may be a graph
// allocation that only the launch makes live.
func (d *device) copyWork(p backend.CopyNode) func() {
	dstHost := p.Kind == backend.CopyDeviceToHost || p.Kind == backend.CopyHostToHost
	srcHost := p.Kind == backend.CopyHostToDevice || p.Kind == backend.CopyHostToHost
	either := p.Kind == backend.CopyDefault
	return func() {
		to, detail := d.copySide(p.Dst, p.Bytes, dstHost, either)
		from, detail2 := d.copySide(p.Src, p.Bytes, srcHost, either)
		if detail != "" || detail2 != "" {
			d.setFault(cudaerr.IllegalAddress, "copy node: "+detail+detail2)
			return
		}
		copy(to, from)
	}
}

// setCopy gives n the copy p; the caller holds gs.mu.
func (d *device) setCopy(n *snode, p backend.CopyNode) {
	n.cp, n.c3, n.run = &p, nil, d.copyWork(p)
	n.label = fmt.Sprintf("copy of %d bytes", p.Bytes)
}

// GraphMemcpyNodeGetParams is a 1D copy node's parameters.
func (d *device) GraphMemcpyNodeGetParams(h backend.GraphNode) (backend.CopyNode, error) {
	const op = "cudaGraphMemcpyNodeGetParams"
	var out backend.CopyNode
	err := d.withNode(op, h, backend.NodeMemcpy, func(n *snode) error {
		if n.cp == nil {
			return d.fail(op, cudaerr.NotSupported, "copy node %#x is not a 1D copy (captured copies are not simulated as such)", uintptr(h))
		}
		out = *n.cp
		return nil
	})
	return out, err
}

// GraphMemcpyNodeSetParams1D makes a copy node a 1D copy.
func (d *device) GraphMemcpyNodeSetParams1D(h backend.GraphNode, p backend.CopyNode) error {
	const op = "cudaGraphMemcpyNodeSetParams1D"
	if err := d.checkCopyNode(op, p); err != nil {
		return err
	}
	return d.withNode(op, h, backend.NodeMemcpy, func(n *snode) error {
		d.setCopy(n, p)
		return nil
	})
}

// GraphExecMemcpyNodeSetParams1D makes a copy node of x a 1D copy for later launches.
func (d *device) GraphExecMemcpyNodeSetParams1D(x backend.GraphExec, h backend.GraphNode, p backend.CopyNode) error {
	const op = "cudaGraphExecMemcpyNodeSetParams1D"
	if err := d.checkCopyNode(op, p); err != nil {
		return err
	}
	return d.withExecNode(op, x, h, backend.NodeMemcpy, func(n *snode) error {
		if n.cp != nil {
			for _, side := range []struct {
				name     string
				old, new uint64
			}{{"destination", n.cp.Dst, p.Dst}, {"source", n.cp.Src, p.Src}} {
				if d.mapping(side.old) != d.mapping(side.new) {
					return d.fail(op, cudaerr.InvalidValue, "copy node %#x: the new %s is %s, the instantiated one %s: an executable graph's copy keeps its memory's mapping",
						uintptr(h), side.name, d.mapping(side.new), d.mapping(side.old))
				}
			}
		}
		d.setCopy(n, p)
		return nil
	})
}

// mapping says where addr lives: page-locked host memory, or which device's memory.
func (d *device) mapping(addr uint64) string {
	if _, detail := d.hostSpan(addr, 1); detail == "" {
		return "host memory"
	}
	if owner := d.b.ownerOf(addr); owner != nil {
		return fmt.Sprintf("memory of device %d", owner.ordinal)
	}
	return fmt.Sprintf("memory of device %d", d.ordinal)
}

// memsetExtent is how many bytes from p.Dst a memset covers, or why p is not a memset.
func memsetExtent(p backend.MemsetNode) (uint64, string) {
	switch p.ElementSize {
	case 1, 2, 4:
	default:
		return 0, fmt.Sprintf("element size %d is not 1, 2 or 4", p.ElementSize)
	}
	if p.Width == 0 || p.Height == 0 {
		return 0, fmt.Sprintf("memset of %d×%d elements", p.Width, p.Height)
	}
	row := p.Width * uint64(p.ElementSize)
	if p.Height > 1 && p.Pitch < row {
		return 0, fmt.Sprintf("pitch %d is less than a row's %d bytes", p.Pitch, row)
	}
	return (p.Height-1)*p.Pitch + row, ""
}

// checkMemsetNode checks a memset node's parameters now.
func (d *device) checkMemsetNode(op string, p backend.MemsetNode) error {
	n, why := memsetExtent(p)
	if why != "" {
		return d.fail(op, cudaerr.InvalidValue, "memset node: %s", why)
	}
	if _, detail := d.resolve(p.Dst, n); detail != "" && !d.graphAddr(p.Dst, n) {
		return d.fail(op, cudaerr.InvalidValue, "memset node destination: %s", detail)
	}
	return nil
}

// memsetWork is a memset node's work at launch.
func (d *device) memsetWork(p backend.MemsetNode) func() {
	size, _ := memsetExtent(p)
	es := int(p.ElementSize)
	var elem [4]byte
	binary.LittleEndian.PutUint32(elem[:], p.Value)
	return func() {
		span, detail := d.resolve(p.Dst, size)
		if detail != "" {
			d.setFault(cudaerr.IllegalAddress, "memset node destination: "+detail)
			return
		}
		row := int(p.Width) * es
		for r := range p.Height {
			line := span[r*p.Pitch:][:row]
			for i := 0; i < row; i += es {
				copy(line[i:i+es], elem[:es])
			}
		}
	}
}

// setMemset gives n the memset p; the caller holds gs.mu.
func (d *device) setMemset(n *snode, p backend.MemsetNode) {
	n.ms, n.run = &p, d.memsetWork(p)
	n.label = fmt.Sprintf("memset %d×%d elements of %d bytes to %#x", p.Width, p.Height, p.ElementSize, p.Value)
}

// GraphMemsetNodeGetParams is a memset node's parameters.
func (d *device) GraphMemsetNodeGetParams(h backend.GraphNode) (backend.MemsetNode, error) {
	const op = "cudaGraphMemsetNodeGetParams"
	var out backend.MemsetNode
	err := d.withNode(op, h, backend.NodeMemset, func(n *snode) error {
		if n.ms == nil {
			return d.fail(op, cudaerr.NotSupported, "memset node %#x was captured (its parameters are not simulated)", uintptr(h))
		}
		out = *n.ms
		return nil
	})
	return out, err
}

// GraphMemsetNodeSetParams changes a memset node.
func (d *device) GraphMemsetNodeSetParams(h backend.GraphNode, p backend.MemsetNode) error {
	const op = "cudaGraphMemsetNodeSetParams"
	if err := d.checkMemsetNode(op, p); err != nil {
		return err
	}
	return d.withNode(op, h, backend.NodeMemset, func(n *snode) error {
		d.setMemset(n, p)
		return nil
	})
}

// GraphExecMemsetNodeSetParams changes a memset node of x for later launches.
func (d *device) GraphExecMemsetNodeSetParams(x backend.GraphExec, h backend.GraphNode, p backend.MemsetNode) error {
	const op = "cudaGraphExecMemsetNodeSetParams"
	if err := d.checkMemsetNode(op, p); err != nil {
		return err
	}
	return d.withExecNode(op, x, h, backend.NodeMemset, func(n *snode) error {
		// The runtime rejects any change of shape of a 2D memset and of the height of a 1D
		// one; other changes of a 1D memset it allows only where the node's resources fit them,
		// so the simulator, which cannot tell, allows only the value and the address to change.
		if old := n.ms; old != nil && (p.Height != old.Height || p.Width != old.Width || p.ElementSize != old.ElementSize ||
			p.Height > 1 && p.Pitch != old.Pitch) {
			return d.fail(op, cudaerr.InvalidValue, "memset node %#x: an executable graph's memset keeps its shape (%d×%d elements of %d bytes), not %d×%d of %d",
				uintptr(h), old.Width, old.Height, old.ElementSize, p.Width, p.Height, p.ElementSize)
		}
		d.setMemset(n, p)
		return nil
	})
}

// GraphHostNodeSetParams makes host node h of g call fn.
func (d *device) GraphHostNodeSetParams(g backend.Graph, h backend.GraphNode, fn func()) error {
	const op = "cudaGraphHostNodeSetParams"
	if fn == nil {
		return d.fail(op, cudaerr.InvalidValue, "nil host function")
	}
	return d.withNode(op, h, backend.NodeHost, func(n *snode) error {
		sg, err := d.graphLocked(op, g)
		if err != nil {
			return err
		}
		if !slices.Contains(sg.nodes, n) {
			return d.fail(op, cudaerr.InvalidValue, "node %#x is not a node of graph %#x", uintptr(h), uintptr(g))
		}
		n.run = d.safeHost(fn)
		return nil
	})
}

// GraphExecHostNodeSetParams makes host node h of x call fn in later launches.
func (d *device) GraphExecHostNodeSetParams(x backend.GraphExec, h backend.GraphNode, fn func()) error {
	const op = "cudaGraphExecHostNodeSetParams"
	if fn == nil {
		return d.fail(op, cudaerr.InvalidValue, "nil host function")
	}
	return d.withExecNode(op, x, h, backend.NodeHost, func(n *snode) error {
		n.run = d.safeHost(fn)
		return nil
	})
}

// GraphChildGraphNodeGetGraph is the graph a child node embeds. It gets a handle, and its
// nodes theirs, the first time it is asked for; they stay valid while the node is.
func (d *device) GraphChildGraphNodeGetGraph(h backend.GraphNode) (backend.Graph, error) {
	const op = "cudaGraphChildGraphNodeGetGraph"
	var out backend.Graph
	err := d.withNode(op, h, backend.NodeGraph, func(n *snode) error {
		c := n.child
		if c.h == 0 {
			c.h = backend.Graph(d.b.nextHandle())
			d.graphs.graphs[c.h] = c
			for _, cn := range c.nodes {
				if cn.h == 0 {
					cn.h = backend.GraphNode(d.b.nextHandle())
					d.graphs.nodes[cn.h] = cn
				}
				if cn.orig == 0 {
					cn.orig = cn.h
				}
			}
		}
		out = c.h
		return nil
	})
	return out, err
}

// dropChildLocked forgets an embedded graph's handle, if it was given one, and its nodes.
func (d *device) dropChildLocked(c *sgraph) {
	if c.h != 0 && d.graphs.graphs[c.h] == c {
		delete(d.graphs.graphs, c.h)
	}
	d.dropNodesLocked(c)
}

// sameTopology reports whether b has a's nodes, matched by position, of the same types and
// with the same edges, and when not, the node of b that differs (nil for the node count).
func sameTopology(a, b *sgraph) (bool, *snode) {
	if len(a.nodes) != len(b.nodes) {
		return false, nil
	}
	for i, n := range b.nodes {
		old := a.nodes[i]
		if n.typ != old.typ || len(n.deps) != len(old.deps) {
			return false, n
		}
		for _, dep := range n.deps {
			if !slices.ContainsFunc(old.deps, func(o *snode) bool { return slices.Index(a.nodes, o) == slices.Index(b.nodes, dep) }) {
				return false, n
			}
		}
		if n.typ == backend.NodeGraph {
			if ok, _ := sameTopology(old.child, n.child); !ok {
				return false, n
			}
		}
		if (n.typ == backend.NodeMemAlloc || n.typ == backend.NodeMemFree) && n.alloc != old.alloc {
			return false, n
		}
	}
	return true, nil
}

// takeParams copies the node parameters of from into to, which have the same topology; the
// caller holds gs.mu.
func (d *device) takeParams(to, from *sgraph) {
	for i, n := range from.nodes {
		old := to.nodes[i]
		old.kern, old.params, old.run, old.ev, old.label = n.kern, n.params, n.run, n.ev, n.label
		old.cp, old.c3, old.ms = n.cp, n.c3, n.ms
		old.params.Args = slices.Clone(n.params.Args)
		if n.child != nil {
			d.takeParams(old.child, n.child)
		}
	}
}

// GraphExecChildGraphNodeSetParams takes child's parameters into child node h of x.
func (d *device) GraphExecChildGraphNodeSetParams(x backend.GraphExec, h backend.GraphNode, child backend.Graph) error {
	const op = "cudaGraphExecChildGraphNodeSetParams"
	return d.withExecNode(op, x, h, backend.NodeGraph, func(n *snode) error {
		c, err := d.graphLocked(op, child)
		if err != nil {
			return err
		}
		if ok, at := sameTopology(n.child, c); !ok {
			where := "its node count"
			if at != nil {
				where = fmt.Sprintf("node %#x (%s)", uintptr(at.h), at.typ)
			}
			return d.fail(op, cudaerr.InvalidValue, "graph %#x differs from the graph child node %#x embeds at %s", uintptr(child), uintptr(h), where)
		}
		for _, cn := range c.nodes {
			if cn.typ == backend.NodeKernel && cn.kern.mod.dev != d {
				return d.fail(op, cudaerr.InvalidValue, "graph %#x launches a kernel of device %d", uintptr(child), cn.kern.mod.dev.ordinal)
			}
		}
		d.takeParams(n.child, c)
		return nil
	})
}

// eventNode reads or changes the event of a record or wait node.
func (d *device) eventOf(op string, h backend.GraphNode, typ backend.NodeType) (backend.Event, error) {
	var out backend.Event
	err := d.withNode(op, h, typ, func(n *snode) error {
		out = n.ev.h
		return nil
	})
	return out, err
}

// checkNodeEvent resolves e for a node of type typ: a recorded event must be of this device.
func (d *device) checkNodeEvent(op string, e backend.Event, typ backend.NodeType) (*event, error) {
	ev, err := d.event(op, e)
	if err != nil {
		return nil, err
	}
	if typ == backend.NodeEventRecord && ev.dev != d {
		return nil, d.fail(op, cudaerr.InvalidResourceHandle, "event %#x belongs to device %d, not device %d", uintptr(e), ev.dev.ordinal, d.ordinal)
	}
	return ev, nil
}

func (d *device) setEvent(op string, h backend.GraphNode, e backend.Event, typ backend.NodeType) error {
	ev, err := d.checkNodeEvent(op, e, typ)
	if err != nil {
		return err
	}
	return d.withNode(op, h, typ, func(n *snode) error {
		n.ev = ev
		return nil
	})
}

func (d *device) setExecEvent(op string, x backend.GraphExec, h backend.GraphNode, e backend.Event, typ backend.NodeType) error {
	ev, err := d.checkNodeEvent(op, e, typ)
	if err != nil {
		return err
	}
	return d.withExecNode(op, x, h, typ, func(n *snode) error {
		n.ev = ev
		return nil
	})
}

// GraphEventRecordNodeGetEvent is the event a record node records.
func (d *device) GraphEventRecordNodeGetEvent(h backend.GraphNode) (backend.Event, error) {
	return d.eventOf("cudaGraphEventRecordNodeGetEvent", h, backend.NodeEventRecord)
}

// GraphEventRecordNodeSetEvent makes a record node record e.
func (d *device) GraphEventRecordNodeSetEvent(h backend.GraphNode, e backend.Event) error {
	return d.setEvent("cudaGraphEventRecordNodeSetEvent", h, e, backend.NodeEventRecord)
}

// GraphEventWaitNodeGetEvent is the event a wait node waits for.
func (d *device) GraphEventWaitNodeGetEvent(h backend.GraphNode) (backend.Event, error) {
	return d.eventOf("cudaGraphEventWaitNodeGetEvent", h, backend.NodeWaitEvent)
}

// GraphEventWaitNodeSetEvent makes a wait node wait for e.
func (d *device) GraphEventWaitNodeSetEvent(h backend.GraphNode, e backend.Event) error {
	return d.setEvent("cudaGraphEventWaitNodeSetEvent", h, e, backend.NodeWaitEvent)
}

// GraphExecEventRecordNodeSetEvent makes a record node of x record e in later launches.
func (d *device) GraphExecEventRecordNodeSetEvent(x backend.GraphExec, h backend.GraphNode, e backend.Event) error {
	return d.setExecEvent("cudaGraphExecEventRecordNodeSetEvent", x, h, e, backend.NodeEventRecord)
}

// GraphExecEventWaitNodeSetEvent makes a wait node of x wait for e in later launches.
func (d *device) GraphExecEventWaitNodeSetEvent(x backend.GraphExec, h backend.GraphNode, e backend.Event) error {
	return d.setExecEvent("cudaGraphExecEventWaitNodeSetEvent", x, h, e, backend.NodeWaitEvent)
}

// GraphMemAllocNodeGetParams is what a mem-alloc node allocates.
func (d *device) GraphMemAllocNodeGetParams(h backend.GraphNode) (backend.AllocNode, error) {
	var out backend.AllocNode
	err := d.withNode("cudaGraphMemAllocNodeGetParams", h, backend.NodeMemAlloc, func(n *snode) error {
		out = backend.AllocNode{Ptr: n.alloc.ptr, Bytes: n.alloc.size, Device: d.ordinal}
		return nil
	})
	return out, err
}

// GraphMemFreeNodeGetParams is the address a mem-free node frees.
func (d *device) GraphMemFreeNodeGetParams(h backend.GraphNode) (backend.DevicePtr, error) {
	var out backend.DevicePtr
	err := d.withNode("cudaGraphMemFreeNodeGetParams", h, backend.NodeMemFree, func(n *snode) error {
		out = n.alloc.ptr
		return nil
	})
	return out, err
}

// GraphAddMemcpyNode1D adds a 1D copy node of any kind; with CopyDefault either side may be
// pinned host memory or memory of any device of the simulator.
func (d *device) GraphAddMemcpyNode1D(g backend.Graph, deps []backend.GraphNode, p backend.CopyNode) (backend.GraphNode, error) {
	const op = "cudaGraphAddMemcpyNode1D"
	if err := d.checkCopyNode(op, p); err != nil {
		return 0, err
	}
	n := &snode{typ: backend.NodeMemcpy}
	d.setCopy(n, p)
	return d.addNode(op, g, deps, n)
}

// GraphKernelNodeGetAttrs is a kernel node's launch attributes.
func (d *device) GraphKernelNodeGetAttrs(h backend.GraphNode) (backend.LaunchAttrs, error) {
	var out backend.LaunchAttrs
	err := d.withNode("cudaGraphKernelNodeGetAttribute", h, backend.NodeKernel, func(n *snode) error {
		out = n.params.Attrs
		// Programmatic serialization is a launch attribute the runtime does not read back
		// from a node (cudaErrorInvalidValue on CUDA 13.0).
		out.ProgrammaticEvent, out.ProgrammaticSerialization = 0, false
		return nil
	})
	return out, err
}

// mergeAttrs is old with the attributes a gives (its non-zero fields) replaced.
func mergeAttrs(old, a backend.LaunchAttrs) backend.LaunchAttrs {
	if a.Cooperative {
		old.Cooperative = true
	}
	if a.Cluster != (backend.Dim3{}) {
		old.Cluster = a.Cluster
	}
	if a.ClusterScheduling != 0 {
		old.ClusterScheduling = a.ClusterScheduling
	}
	if a.Priority != 0 {
		old.Priority = a.Priority
	}
	if a.ProgrammaticSerialization {
		old.ProgrammaticSerialization = true
	}
	if a.MemSyncDomain != 0 {
		old.MemSyncDomain = a.MemSyncDomain
	}
	if a.ProgrammaticEvent != 0 {
		old.ProgrammaticEvent = a.ProgrammaticEvent
	}
	return old
}

// GraphKernelNodeSetAttrs sets the attributes a gives on a kernel node, checked against its
// kernel and shape.
func (d *device) GraphKernelNodeSetAttrs(h backend.GraphNode, a backend.LaunchAttrs) error {
	const op = "cudaGraphKernelNodeSetAttribute"
	return d.withNode(op, h, backend.NodeKernel, func(n *snode) error {
		merged := mergeAttrs(n.params.Attrs, a)
		p := n.params
		if err := d.checkAttrs(op, n.kern, p.Grid, p.Block, p.SharedMem, merged); err != nil {
			return err
		}
		n.params.Attrs = merged
		return nil
	})
}

// GraphKernelNodeCopyAttributes gives kernel node dst the launch attributes of src.
func (d *device) GraphKernelNodeCopyAttributes(dst, src backend.GraphNode) error {
	const op = "cudaGraphKernelNodeCopyAttributes"
	var attrs backend.LaunchAttrs
	if err := d.withNode(op, src, backend.NodeKernel, func(n *snode) error {
		attrs = n.params.Attrs
		return nil
	}); err != nil {
		return err
	}
	return d.withNode(op, dst, backend.NodeKernel, func(n *snode) error {
		p := n.params
		if err := d.checkAttrs(op, n.kern, p.Grid, p.Block, p.SharedMem, attrs); err != nil {
			return err
		}
		n.params.Attrs = attrs
		return nil
	})
}
