package sim

import (
	"fmt"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"go.uber.org/zap"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Graphs in the simulator: a graph is a list of nodes with their dependencies. Launching an
// instantiated graph queues one task on the stream; that task runs every node on a goroutine of
// its own once the node's dependencies have finished, so nodes with no path between them run
// concurrently, and returns when all have.

// graphState is a device's graphs, instantiated graphs, nodes and captures. The device's
// actor thread is its only caller, but launched graphs read node parameters from their own
// goroutines, so everything is guarded by mu.
type graphState struct {
	mu       sync.Mutex
	graphs   map[backend.Graph]*sgraph
	execs    map[backend.GraphExec]*sexec
	nodes    map[backend.GraphNode]*snode
	allocs   map[backend.DevicePtr]*simAlloc
	captures map[*stream]*capture
	recorded map[*event]*capturedRecord    // events recorded inside a capture
	high     graphMemHigh                  // graph memory high watermarks (graph_mem.go)
	users    map[backend.UserObject]*suobj // user objects (graph_userobj.go)
	// condUsed is the conditional node each handle drives: CUDA ties a handle to one node.
	condUsed map[backend.ConditionalHandle]*scond
}

func (gs *graphState) init() {
	if gs.graphs == nil {
		gs.graphs = map[backend.Graph]*sgraph{}
		gs.execs = map[backend.GraphExec]*sexec{}
		gs.nodes = map[backend.GraphNode]*snode{}
		gs.allocs = map[backend.DevicePtr]*simAlloc{}
		gs.captures = map[*stream]*capture{}
		gs.recorded = map[*event]*capturedRecord{}
		gs.users = map[backend.UserObject]*suobj{}
		gs.condUsed = map[backend.ConditionalHandle]*scond{}
	}
}

// sgraph is a cudaGraph_t.
type sgraph struct {
	h      backend.Graph
	nodes  []*snode
	users  map[*suobj]int                         // references to user objects (graph_userobj.go)
	conds  map[backend.ConditionalHandle]condSpec // handles made on this graph (graph_conditional.go)
	body   *snode                                 // for a conditional node's body: the node
	parent *sgraph                                // and the graph that holds the node
}

// snode is one node. Exactly the fields of its type are set.
type snode struct {
	h     backend.GraphNode
	typ   backend.NodeType
	label string
	deps  []*snode
	orig  backend.GraphNode // the node this one was cloned from (itself when not a clone)
	from  backend.GraphNode // the node of the source graph a cloned node copies (FindInClone)

	kern   *kernel
	params backend.KernelNode    // kernel nodes
	run    func()                // copies, memsets, host functions, captured work
	child  *sgraph               // child-graph nodes: a private copy
	ev     *event                // event record and wait nodes
	alloc  *simAlloc             // mem-alloc and mem-free nodes
	cond   *scond                // conditional nodes (graph_conditional.go)
	cp     *backend.CopyNode     // 1D copy nodes added or set through the API (graph_params.go)
	c3     *backend.Copy3DParams // 3D copy nodes added or set through the API (graph_copy3d.go)
	ms     *backend.MemsetNode   // memset nodes added or set through the API
}

// simAlloc is the memory of a mem-alloc node: reserved while any graph or executable graph
// holding the node exists, so that its address stays fixed, as CUDA's is.
type simAlloc struct {
	ptr  backend.DevicePtr
	size uint64
	refs int
	live bool // allocated by a launch and not yet freed by one
	// backed: a launch allocated it, so its memory stays associated with the graphs holding
	// the node (counted as used) after a launch frees it, as the runtime keeps it mapped for
	// the next launch, until the last holder lets it go.
	backed bool
}

// sexec is a cudaGraphExec_t: a private copy of the graph, with per-node parameters that
// updates change.
type sexec struct {
	h        backend.GraphExec
	g        *sgraph
	byOrig   map[backend.GraphNode]*snode // every node handle the exec answers to
	disabled map[*snode]bool
	flags    uint64
	conds    *condVals // the conditional variables of the graph and its bodies
	from     *sgraph   // the graph it was instantiated from
}

// capture is a stream capture in progress: the streams taking part and, for each, the nodes
// its next op depends on.
type capture struct {
	id      uint64
	mode    backend.CaptureMode
	origin  *stream
	graph   *sgraph
	tails   map[*stream][]*snode
	invalid string // why the capture was invalidated; "" while it is valid
	into    bool   // capturing into an existing graph (cudaStreamBeginCaptureToGraph)
}

// capturedRecord is an event recorded in a capture: waiting on it joins the capture.
type capturedRecord struct {
	c    *capture
	deps []*snode
}

// graph looks up a live graph of d; the caller holds gs.mu.
func (d *device) graphLocked(op string, h backend.Graph) (*sgraph, error) {
	g := d.graphs.graphs[h]
	if g == nil {
		return nil, d.fail(op, cudaerr.InvalidValue, "graph %#x is not a live graph of device %d", uintptr(h), d.ordinal)
	}
	return g, nil
}

// depsLocked resolves dependency handles: each must be a node of g, listed once.
func (d *device) depsLocked(op string, g *sgraph, deps []backend.GraphNode) ([]*snode, error) {
	out := make([]*snode, 0, len(deps))
	for _, h := range deps {
		n := d.graphs.nodes[h]
		if n == nil || !slices.Contains(g.nodes, n) {
			return nil, d.fail(op, cudaerr.InvalidValue, "dependency %#x is not a node of graph %#x", uintptr(h), uintptr(g.h))
		}
		if slices.Contains(out, n) {
			return nil, d.fail(op, cudaerr.InvalidValue, "dependency %#x is listed twice", uintptr(h))
		}
		out = append(out, n)
	}
	return out, nil
}

// addNode checks g and deps, then adds n to g.
func (d *device) addNode(op string, gh backend.Graph, deps []backend.GraphNode, n *snode) (backend.GraphNode, error) {
	if err := d.alive(op); err != nil {
		return 0, err
	}
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	g, err := d.graphLocked(op, gh)
	if err != nil {
		return 0, err
	}
	if n.deps, err = d.depsLocked(op, g, deps); err != nil {
		return 0, err
	}
	d.insertLocked(g, n)
	return n.h, nil
}

func (d *device) insertLocked(g *sgraph, n *snode) {
	n.h = backend.GraphNode(d.b.nextHandle())
	n.orig = n.h
	g.nodes = append(g.nodes, n)
	d.graphs.nodes[n.h] = n
}

// GraphCreate makes an empty graph.
func (d *device) GraphCreate() (backend.Graph, error) {
	if err := d.alive("cudaGraphCreate"); err != nil {
		return 0, err
	}
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	return d.newGraphLocked().h, nil
}

func (d *device) newGraphLocked() *sgraph {
	g := &sgraph{h: backend.Graph(d.b.nextHandle())}
	d.graphs.graphs[g.h] = g
	return g
}

// GraphDestroy destroys a graph; executable graphs made from it stay valid.
func (d *device) GraphDestroy(h backend.Graph) error {
	const op = "cudaGraphDestroy"
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	g, err := d.graphLocked(op, h)
	if err != nil {
		return err
	}
	if g.body != nil {
		return d.fail(op, cudaerr.InvalidValue, "graph %#x is a body of conditional node %#x, destroyed with it", uintptr(h), uintptr(g.body.h))
	}
	for c := range gs.captures {
		if gs.captures[c].graph == g {
			return d.fail(op, cudaerr.IllegalState, "graph %#x is still being captured into", uintptr(h))
		}
	}
	delete(gs.graphs, h)
	d.dropNodesLocked(g)
	return nil
}

// dropNodesLocked forgets g's node handles and releases its allocations.
func (d *device) dropNodesLocked(g *sgraph) {
	d.releaseUsersLocked(g)
	for _, n := range g.nodes {
		if d.graphs.nodes[n.h] == n {
			delete(d.graphs.nodes, n.h)
		}
		if n.typ == backend.NodeMemAlloc {
			d.releaseLocked(n.alloc)
		}
		if n.child != nil {
			d.dropChildLocked(n.child)
		}
		if n.cond != nil {
			d.dropBodiesLocked(n.cond)
		}
	}
}

func (d *device) releaseLocked(a *simAlloc) {
	if a.refs--; a.refs == 0 {
		delete(d.graphs.allocs, a.ptr)
		d.mem.remove(uint64(a.ptr))
	}
}

// cloneLocked copies g's nodes (child graphs deeply); register makes the copies' handles
// known (clones the user sees), else they stay private (executable graphs, child nodes).
func (d *device) cloneLocked(g *sgraph, register bool) *sgraph {
	c := &sgraph{conds: maps.Clone(g.conds)}
	d.copyUsersLocked(g, c)
	m := make(map[*snode]*snode, len(g.nodes))
	for _, n := range g.nodes {
		cp := *n
		cp.from = n.h
		cp.deps = make([]*snode, len(n.deps))
		for i, dep := range n.deps {
			cp.deps[i] = m[dep]
		}
		cp.params.Args = slices.Clone(n.params.Args)
		if n.child != nil {
			cp.child = d.cloneLocked(n.child, false)
		}
		if n.cond != nil {
			cp.cond = d.cloneCondLocked(n.cond)
		}
		if n.typ == backend.NodeMemAlloc {
			n.alloc.refs++
		}
		if register {
			d.insertLocked(c, &cp)
		} else {
			cp.h = 0
			c.nodes = append(c.nodes, &cp)
		}
		m[n] = c.nodes[len(c.nodes)-1]
	}
	return c
}

// GraphClone copies a graph.
func (d *device) GraphClone(h backend.Graph) (backend.Graph, error) {
	const op = "cudaGraphClone"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	g, err := d.graphLocked(op, h)
	if err != nil {
		return 0, err
	}
	if err := d.refuseConditionalsLocked(op, g, "cloned"); err != nil {
		return 0, err
	}
	c := d.cloneLocked(g, true)
	c.h = backend.Graph(d.b.nextHandle())
	gs.graphs[c.h] = c
	return c.h, nil
}

// GraphNodes lists the graph's nodes in the order they were added.
func (d *device) GraphNodes(h backend.Graph) ([]backend.GraphNode, error) {
	return d.listNodes("cudaGraphGetNodes", h, func(*snode) bool { return true })
}

// GraphRootNodes lists the nodes without dependencies.
func (d *device) GraphRootNodes(h backend.Graph) ([]backend.GraphNode, error) {
	return d.listNodes("cudaGraphGetRootNodes", h, func(n *snode) bool { return len(n.deps) == 0 })
}

func (d *device) listNodes(op string, h backend.Graph, keep func(*snode) bool) ([]backend.GraphNode, error) {
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	g, err := d.graphLocked(op, h)
	if err != nil {
		return nil, err
	}
	var out []backend.GraphNode
	for _, n := range g.nodes {
		if keep(n) {
			out = append(out, n.h)
		}
	}
	return out, nil
}

// GraphEdges lists the graph's edges.
func (d *device) GraphEdges(h backend.Graph) (from, to []backend.GraphNode, err error) {
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	g, err := d.graphLocked("cudaGraphGetEdges", h)
	if err != nil {
		return nil, nil, err
	}
	for _, n := range g.nodes {
		for _, dep := range n.deps {
			from, to = append(from, dep.h), append(to, n.h)
		}
	}
	return from, to, nil
}

// GraphNodeType is the node's type.
func (d *device) GraphNodeType(h backend.GraphNode) (backend.NodeType, error) {
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	n := gs.nodes[h]
	if n == nil {
		return 0, d.fail("cudaGraphNodeGetType", cudaerr.InvalidValue, "node %#x is not a live node of device %d", uintptr(h), d.ordinal)
	}
	return n.typ, nil
}

// GraphAddDependencies adds edges; both ends must be nodes of g, and no cycle may form.
func (d *device) GraphAddDependencies(h backend.Graph, from, to []backend.GraphNode) error {
	const op = "cudaGraphAddDependencies"
	if len(from) != len(to) {
		return d.fail(op, cudaerr.InvalidValue, "%d sources for %d destinations", len(from), len(to))
	}
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	g, err := d.graphLocked(op, h)
	if err != nil {
		return err
	}
	for i := range from {
		f, t := gs.nodes[from[i]], gs.nodes[to[i]]
		for _, x := range []struct {
			n *snode
			h backend.GraphNode
		}{{f, from[i]}, {t, to[i]}} {
			if x.n == nil || !slices.Contains(g.nodes, x.n) {
				return d.fail(op, cudaerr.InvalidValue, "node %#x is not a node of graph %#x", uintptr(x.h), uintptr(h))
			}
		}
		if f == t || reaches(f, t) {
			return d.fail(op, cudaerr.InvalidValue, "edge %#x -> %#x would make a cycle", uintptr(from[i]), uintptr(to[i]))
		}
		if slices.Contains(t.deps, f) {
			return d.fail(op, cudaerr.InvalidValue, "edge %#x -> %#x exists already", uintptr(from[i]), uintptr(to[i]))
		}
		t.deps = append(t.deps, f)
	}
	// Keep g.nodes in an order where every node follows its dependencies.
	g.nodes = topoOrder(g.nodes)
	return nil
}

// reaches reports whether from is reachable backwards from n (n depends on from, directly or not).
func reaches(n, from *snode) bool {
	seen := map[*snode]bool{}
	stack := slices.Clone(n.deps)
	for len(stack) > 0 {
		dep := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if dep == from {
			return true
		}
		if !seen[dep] { // each node once: layered graphs have exponentially many paths
			seen[dep] = true
			stack = append(stack, dep.deps...)
		}
	}
	return false
}

func topoOrder(nodes []*snode) []*snode {
	out := make([]*snode, 0, len(nodes))
	seen := map[*snode]bool{}
	var visit func(n *snode)
	visit = func(n *snode) {
		if seen[n] {
			return
		}
		seen[n] = true
		for _, dep := range n.deps {
			visit(dep)
		}
		out = append(out, n)
	}
	for _, n := range nodes {
		visit(n)
	}
	return out
}

// GraphDebugDot writes the graph in Graphviz DOT.
func (d *device) GraphDebugDot(h backend.Graph, path string) error {
	const op = "cudaGraphDebugDotPrint"
	gs := &d.graphs
	gs.mu.Lock()
	g, err := d.graphLocked(op, h)
	var b strings.Builder
	if err == nil {
		fmt.Fprintf(&b, "digraph sim_graph_%d {\n", uintptr(h))
		writeDot(&b, g, "n")
		b.WriteString("}\n")
	}
	gs.mu.Unlock()
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return d.fail(op, cudaerr.InvalidValue, "writing %s: %v", path, err)
	}
	return nil
}

func writeDot(b *strings.Builder, g *sgraph, prefix string) {
	for i, n := range g.nodes {
		id := fmt.Sprintf("%s%d", prefix, i)
		if n.child != nil {
			fmt.Fprintf(b, "subgraph cluster_%s {\nlabel=%q;\n%s [shape=point];\n", id, "child graph", id)
			writeDot(b, n.child, id+"_")
			b.WriteString("}\n")
		} else if n.cond != nil {
			writeCondDot(b, n, id)
		} else {
			fmt.Fprintf(b, "%s [label=%q];\n", id, n.typ.String()+": "+n.label)
		}
		for _, dep := range n.deps {
			fmt.Fprintf(b, "%s%d -> %s;\n", prefix, slices.Index(g.nodes, dep), id)
		}
	}
}

// GraphAddKernelNode adds a kernel node.
func (d *device) GraphAddKernelNode(g backend.Graph, deps []backend.GraphNode, p backend.KernelNode) (backend.GraphNode, error) {
	const op = "cudaGraphAddKernelNode"
	k, err := d.graphKernel(op, p)
	if err != nil {
		return 0, err
	}
	p.Args = slices.Clone(p.Args)
	return d.addNode(op, g, deps, &snode{typ: backend.NodeKernel, label: k.label, kern: k, params: p})
}

// graphKernel checks a kernel node's parameters.
func (d *device) graphKernel(op string, p backend.KernelNode) (*kernel, error) {
	d.b.mu.RLock()
	k := d.b.kernels[p.Kernel]
	d.b.mu.RUnlock()
	if k == nil {
		return nil, d.fail(op, cudaerr.InvalidResourceHandle, "kernel %#x is not a live kernel", uintptr(p.Kernel))
	}
	if k.mod.dev != d {
		return nil, d.fail(op, cudaerr.InvalidResourceHandle, "kernel %q was loaded on device %d, not device %d", k.name, k.mod.dev.ordinal, d.ordinal)
	}
	if why := d.checkLaunch(p.Grid, p.Block, p.SharedMem); why != "" {
		return nil, d.fail(op, cudaerr.InvalidConfiguration, "kernel %q: %s", k.name, why)
	}
	if err := d.checkKernelShared(op, k, p.SharedMem); err != nil {
		return nil, err
	}
	if err := d.checkAttrs(op, k, p.Grid, p.Block, p.SharedMem, p.Attrs); err != nil {
		return nil, err
	}
	return k, nil
}

// GraphAddCopyHtoD adds a host-to-device copy node.
func (d *device) GraphAddCopyHtoD(g backend.Graph, deps []backend.GraphNode, dst backend.DevicePtr, src unsafe.Pointer, n uint64) (backend.GraphNode, error) {
	const op = "cudaGraphAddMemcpyNode1D"
	if err := d.checkCopy(op, src, n, dst, "destination"); err != nil {
		return 0, err
	}
	from := unsafe.Slice((*byte)(src), n)
	return d.addNode(op, g, deps, &snode{typ: backend.NodeMemcpy, label: "host-to-device copy",
		run: d.hostCopy("host-to-device copy node destination", dst, from, true),
		cp:  &backend.CopyNode{Dst: uint64(dst), Src: uint64(uintptr(src)), Bytes: n, Kind: backend.CopyHostToDevice}})
}

// GraphAddCopyDtoH adds a device-to-host copy node.
func (d *device) GraphAddCopyDtoH(g backend.Graph, deps []backend.GraphNode, dst unsafe.Pointer, src backend.DevicePtr, n uint64) (backend.GraphNode, error) {
	const op = "cudaGraphAddMemcpyNode1D"
	if err := d.checkCopy(op, dst, n, src, "source"); err != nil {
		return 0, err
	}
	to := unsafe.Slice((*byte)(dst), n)
	return d.addNode(op, g, deps, &snode{typ: backend.NodeMemcpy, label: "device-to-host copy",
		run: d.hostCopy("device-to-host copy node source", src, to, false),
		cp:  &backend.CopyNode{Dst: uint64(uintptr(dst)), Src: uint64(src), Bytes: n, Kind: backend.CopyDeviceToHost}})
}

// checkCopy checks the host and device sides of a copy node: the host side must be pinned, as
// the node reads or writes it at every launch, long after the call.
func (d *device) checkCopy(op string, host unsafe.Pointer, n uint64, dev backend.DevicePtr, side string) error {
	if n == 0 || host == nil {
		return d.fail(op, cudaerr.InvalidValue, "copy node of %d bytes with host pointer %p", n, host)
	}
	if !d.b.host.pinned(host, n) {
		return d.fail(op, cudaerr.InvalidValue, "copy node host memory %p (+%d bytes) is not pinned", host, n)
	}
	if _, detail := d.resolveAny(dev, n); detail != "" && !d.graphAddr(dev, n) {
		return d.fail(op, cudaerr.InvalidValue, "copy node %s: %s", side, detail)
	}
	return nil
}

// graphAddr reports whether [p, p+n) lies in memory of a mem-alloc node.
func (d *device) graphAddr(p backend.DevicePtr, n uint64) bool {
	d.graphs.mu.Lock()
	defer d.graphs.mu.Unlock()
	for _, a := range d.graphs.allocs {
		if p >= a.ptr && uint64(p-a.ptr)+n <= a.size {
			return true
		}
	}
	return false
}

// GraphAddCopyDtoD adds a device-to-device copy node.
func (d *device) GraphAddCopyDtoD(g backend.Graph, deps []backend.GraphNode, dst, src backend.DevicePtr, n uint64) (backend.GraphNode, error) {
	const op = "cudaGraphAddMemcpyNode1D"
	if n == 0 {
		return 0, d.fail(op, cudaerr.InvalidValue, "copy node of 0 bytes")
	}
	for _, p := range []backend.DevicePtr{dst, src} {
		if _, detail := d.resolveAny(p, n); detail != "" && !d.graphAddr(p, n) {
			return 0, d.fail(op, cudaerr.InvalidValue, "device-to-device copy node: %s", detail)
		}
	}
	cp := &backend.CopyNode{Dst: uint64(dst), Src: uint64(src), Bytes: n, Kind: backend.CopyDeviceToDevice}
	return d.addNode(op, g, deps, &snode{typ: backend.NodeMemcpy, label: "device-to-device copy", cp: cp, run: func() {
		from, detail := d.resolveAny(src, n)
		to, detail2 := d.resolveAny(dst, n)
		if detail != "" || detail2 != "" {
			d.setFault(cudaerr.IllegalAddress, "device-to-device copy node: "+detail+detail2)
			return
		}
		copy(to, from)
	}})
}

// GraphAddMemsetNode adds a memset node.
func (d *device) GraphAddMemsetNode(g backend.Graph, deps []backend.GraphNode, p backend.DevicePtr, value byte, n uint64) (backend.GraphNode, error) {
	const op = "cudaGraphAddMemsetNode"
	if n == 0 {
		return 0, d.fail(op, cudaerr.InvalidValue, "memset node of 0 bytes")
	}
	if _, detail := d.resolve(p, n); detail != "" && !d.graphAddr(p, n) {
		return 0, d.fail(op, cudaerr.InvalidValue, "memset node destination: %s", detail)
	}
	ms := &backend.MemsetNode{Dst: p, Value: uint32(value), ElementSize: 1, Width: n, Height: 1}
	return d.addNode(op, g, deps, &snode{typ: backend.NodeMemset, label: fmt.Sprintf("memset %d bytes to %#x", n, value), ms: ms, run: func() {
		to, detail := d.resolve(p, n)
		if detail != "" {
			d.setFault(cudaerr.IllegalAddress, "memset node destination: "+detail)
			return
		}
		for i := range to {
			to[i] = value
		}
	}})
}

// GraphAddHostNode adds a host function node; fn runs at every launch. A panic in it is
// recovered and logged, as for LaunchHostFunc.
func (d *device) GraphAddHostNode(g backend.Graph, deps []backend.GraphNode, fn func()) (backend.GraphNode, error) {
	const op = "cudaGraphAddHostNode"
	if fn == nil {
		return 0, d.fail(op, cudaerr.InvalidValue, "nil host function")
	}
	return d.addNode(op, g, deps, &snode{typ: backend.NodeHost, label: "host function", run: d.safeHost(fn)})
}

func (d *device) safeHost(fn func()) func() {
	return func() {
		defer func() {
			if r := recover(); r != nil {
				d.log.Error("sim: graph host function panicked; recovered, the graph goes on",
					zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
			}
		}()
		fn()
	}
}

// GraphAddChildNode adds a copy of child as one node.
func (d *device) GraphAddChildNode(gh backend.Graph, deps []backend.GraphNode, child backend.Graph) (backend.GraphNode, error) {
	const op = "cudaGraphAddChildGraphNode"
	gs := &d.graphs
	gs.mu.Lock()
	gs.init()
	c, err := d.graphLocked(op, child)
	var cp *sgraph
	if err == nil {
		if child == gh {
			err = d.fail(op, cudaerr.InvalidValue, "a graph cannot be its own child")
		} else if err = d.refuseConditionalsLocked(op, c, "a child graph"); err == nil {
			cp = d.cloneLocked(c, false)
		}
	}
	gs.mu.Unlock()
	if err != nil {
		return 0, err
	}
	n, err := d.addNode(op, gh, deps, &snode{typ: backend.NodeGraph, label: "child graph", child: cp})
	if err != nil {
		gs.mu.Lock()
		d.dropNodesLocked(cp)
		gs.mu.Unlock()
	}
	return n, err
}

// GraphAddEmptyNode adds a node that does nothing.
func (d *device) GraphAddEmptyNode(g backend.Graph, deps []backend.GraphNode) (backend.GraphNode, error) {
	return d.addNode("cudaGraphAddEmptyNode", g, deps, &snode{typ: backend.NodeEmpty, label: "empty"})
}

// GraphAddEventRecordNode adds an event record node; the event must be of this device.
func (d *device) GraphAddEventRecordNode(g backend.Graph, deps []backend.GraphNode, e backend.Event) (backend.GraphNode, error) {
	const op = "cudaGraphAddEventRecordNode"
	ev, err := d.event(op, e)
	if err != nil {
		return 0, err
	}
	if ev.dev != d {
		return 0, d.fail(op, cudaerr.InvalidResourceHandle, "event %#x belongs to device %d, not device %d", uintptr(e), ev.dev.ordinal, d.ordinal)
	}
	return d.addNode(op, g, deps, &snode{typ: backend.NodeEventRecord, label: fmt.Sprintf("record event %#x", uintptr(e)), ev: ev})
}

// GraphAddEventWaitNode adds an event wait node (the event may be of any device).
func (d *device) GraphAddEventWaitNode(g backend.Graph, deps []backend.GraphNode, e backend.Event) (backend.GraphNode, error) {
	const op = "cudaGraphAddEventWaitNode"
	ev, err := d.event(op, e)
	if err != nil {
		return 0, err
	}
	return d.addNode(op, g, deps, &snode{typ: backend.NodeWaitEvent, label: fmt.Sprintf("wait for event %#x", uintptr(e)), ev: ev})
}

// GraphAddMemAllocNode adds an allocation node. Its memory is reserved now and stays at the
// same address while any graph or executable graph with the node exists.
func (d *device) GraphAddMemAllocNode(g backend.Graph, deps []backend.GraphNode, size uint64) (backend.GraphNode, backend.DevicePtr, error) {
	const op = "cudaGraphAddMemAllocNode"
	if size == 0 {
		return 0, 0, d.fail(op, cudaerr.InvalidValue, "allocation node of 0 bytes")
	}
	a, detail := d.mem.alloc(size)
	if a == nil {
		return 0, 0, d.fail(op, cudaerr.MemoryAllocation, "%s", detail)
	}
	sa := &simAlloc{ptr: backend.DevicePtr(a.addr), size: size, refs: 1}
	n, err := d.addNode(op, g, deps, &snode{typ: backend.NodeMemAlloc, label: fmt.Sprintf("allocate %d bytes", size), alloc: sa})
	if err != nil {
		d.mem.remove(a.addr)
		return 0, 0, err
	}
	d.graphs.mu.Lock()
	d.graphs.allocs[sa.ptr] = sa
	d.graphs.noteMemLocked()
	d.graphs.mu.Unlock()
	return n, sa.ptr, nil
}

// GraphAddMemFreeNode adds a free node for memory of a mem-alloc node.
func (d *device) GraphAddMemFreeNode(g backend.Graph, deps []backend.GraphNode, p backend.DevicePtr) (backend.GraphNode, error) {
	const op = "cudaGraphAddMemFreeNode"
	d.graphs.mu.Lock()
	d.graphs.init()
	a := d.graphs.allocs[p]
	d.graphs.mu.Unlock()
	if a == nil {
		return 0, d.fail(op, cudaerr.InvalidValue, "%#x is not the address of a graph allocation", uintptr(p))
	}
	return d.addNode(op, g, deps, &snode{typ: backend.NodeMemFree, label: fmt.Sprintf("free %#x", uintptr(p)), alloc: a})
}
