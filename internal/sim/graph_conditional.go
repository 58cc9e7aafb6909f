package sim

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Conditional nodes in the simulator, with CUDA's semantics: a handle is a variable of the
// graph it was made on (and of that graph's bodies); each executable graph has its own copy of
// every variable, set to the default at each launch when the handle asks for it, and kept from
// launch to launch otherwise. Kernels of the launch set them (cuda.SimSetConditional). An if
// node runs body 0 when its variable is non-zero, else body 1 when it has two; a while node
// checks before its first run and after each; a switch node runs body[value] when value < size.

// condSpec is how a handle was made.
type condSpec struct {
	def   uint32
	flags uint32
}

// scond is a conditional node: its parameters and its bodies, graphs of the node's own.
type scond struct {
	p      backend.ConditionalNode
	bodies []*sgraph
}

// condVals is an executable graph's conditional variables.
type condVals struct {
	specs map[backend.ConditionalHandle]condSpec
	vals  map[backend.ConditionalHandle]*atomic.Uint32
}

// newCondVals collects the handles of g and of its bodies, at any depth.
func newCondVals(g *sgraph) *condVals {
	cv := &condVals{specs: map[backend.ConditionalHandle]condSpec{}, vals: map[backend.ConditionalHandle]*atomic.Uint32{}}
	var walk func(g *sgraph)
	walk = func(g *sgraph) {
		for h, s := range g.conds {
			v := &atomic.Uint32{}
			v.Store(s.def)
			cv.specs[h], cv.vals[h] = s, v
		}
		for _, n := range g.nodes {
			if n.cond != nil {
				for _, b := range n.cond.bodies {
					walk(b)
				}
			}
			if n.child != nil {
				walk(n.child)
			}
		}
	}
	walk(g)
	return cv
}

// launch applies the defaults of the handles made with CondAssignDefault, as a launch begins.
func (cv *condVals) launch() {
	for h, s := range cv.specs {
		if s.flags&backend.CondAssignDefault != 0 {
			cv.vals[h].Store(s.def)
		}
	}
}

// sim is what a kernel of the launch sees (nil when the graph has no handles).
func (cv *condVals) sim() cuda.SimConditionals {
	if cv == nil || len(cv.vals) == 0 {
		return nil
	}
	return cv
}

// SetConditional sets a variable of the launch.
func (cv *condVals) SetConditional(h backend.ConditionalHandle, value uint32) error {
	v := cv.vals[h]
	if v == nil {
		return fmt.Errorf("conditional handle %#x is not a handle of the launched graph", uint64(h))
	}
	v.Store(value)
	return nil
}

func (cv *condVals) get(h backend.ConditionalHandle) uint32 {
	if v := cv.vals[h]; v != nil {
		return v.Load()
	}
	return 0
}

// GraphConditionalHandleCreate makes a conditional variable of g.
func (d *device) GraphConditionalHandleCreate(gh backend.Graph, def, flags uint32) (backend.ConditionalHandle, error) {
	const op = "cudaGraphConditionalHandleCreate"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	if flags&^backend.CondAssignDefault != 0 {
		return 0, d.fail(op, cudaerr.InvalidValue, "unknown conditional handle flags %#x", flags)
	}
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	g, err := d.graphLocked(op, gh)
	if err != nil {
		return 0, err
	}
	h := backend.ConditionalHandle(d.b.nextHandle())
	if g.conds == nil {
		g.conds = map[backend.ConditionalHandle]condSpec{}
	}
	g.conds[h] = condSpec{def: def, flags: flags}
	return h, nil
}

// handleScopeLocked reports whether h was made on g or on a graph g is (at any depth) a body of.
func handleScopeLocked(g *sgraph, h backend.ConditionalHandle) bool {
	for ; g != nil; g = g.parent {
		if _, ok := g.conds[h]; ok {
			return true
		}
	}
	return false
}

// GraphAddNode adds a kernel, memset, empty or conditional node.
func (d *device) GraphAddNode(gh backend.Graph, deps []backend.GraphNode, p backend.NodeParams) (backend.GraphNode, []backend.Graph, error) {
	const op = "cudaGraphAddNode"
	switch p.Type {
	case backend.NodeKernel:
		n, err := d.GraphAddKernelNode(gh, deps, p.Kernel)
		return n, nil, err
	case backend.NodeMemset:
		if err := d.checkMemsetNode(op, p.Memset); err != nil {
			return 0, nil, err
		}
		size, _ := memsetExtent(p.Memset)
		n, err := d.GraphAddMemsetNode(gh, deps, p.Memset.Dst, byte(p.Memset.Value), size)
		if err != nil {
			return 0, nil, err
		}
		return n, nil, d.GraphMemsetNodeSetParams(n, p.Memset)
	case backend.NodeEmpty:
		n, err := d.GraphAddEmptyNode(gh, deps)
		return n, nil, err
	case backend.NodeConditional:
		return d.addConditional(op, gh, deps, p.Conditional)
	}
	return 0, nil, d.fail(op, cudaerr.NotSupported, "the simulator's cudaGraphAddNode takes kernel, memset, empty and conditional nodes, not %s nodes", p.Type)
}

// checkCond checks a conditional node's type and size.
func (d *device) checkCond(op string, p backend.ConditionalNode) error {
	ok := false
	switch p.Type {
	case backend.CondIf:
		ok = p.Size == 1 || p.Size == 2
	case backend.CondWhile:
		ok = p.Size == 1
	case backend.CondSwitch:
		ok = p.Size > 0
	default:
		return d.fail(op, cudaerr.InvalidValue, "unknown conditional node type %d", p.Type)
	}
	if !ok {
		return d.fail(op, cudaerr.InvalidValue, "a %s node cannot have %d bodies (while: 1; if: 1 or 2; switch: 1 or more)", p.Type, p.Size)
	}
	return nil
}

func (d *device) addConditional(op string, gh backend.Graph, deps []backend.GraphNode, p backend.ConditionalNode) (backend.GraphNode, []backend.Graph, error) {
	if err := d.checkCond(op, p); err != nil {
		return 0, nil, err
	}
	gs := &d.graphs
	gs.mu.Lock()
	gs.init()
	g, err := d.graphLocked(op, gh)
	if err == nil && !handleScopeLocked(g, p.Handle) {
		err = d.fail(op, cudaerr.InvalidValue, "conditional handle %#x was not made on graph %#x nor on a graph it is a body of", uint64(p.Handle), uintptr(gh))
	}
	if err == nil && gs.condUsed[p.Handle] != nil {
		err = d.fail(op, cudaerr.InvalidValue, "conditional handle %#x already drives another conditional node", uint64(p.Handle))
	}
	gs.mu.Unlock()
	if err != nil {
		return 0, nil, err
	}
	c := &scond{p: p}
	n := &snode{typ: backend.NodeConditional, label: fmt.Sprintf("%s on %#x (%d bodies)", p.Type, uint64(p.Handle), p.Size), cond: c}
	h, err := d.addNode(op, gh, deps, n)
	if err != nil {
		return 0, nil, err
	}
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.condUsed[p.Handle] = c
	out := make([]backend.Graph, p.Size)
	for i := range out {
		b := d.newGraphLocked()
		b.body, b.parent = n, g
		c.bodies = append(c.bodies, b)
		out[i] = b.h
	}
	return h, out, nil
}

// dropBodiesLocked destroys a conditional node's bodies with the node.
func (d *device) dropBodiesLocked(c *scond) {
	if d.graphs.condUsed[c.p.Handle] == c {
		delete(d.graphs.condUsed, c.p.Handle)
	}
	for _, b := range c.bodies {
		if d.graphs.graphs[b.h] == b {
			delete(d.graphs.graphs, b.h)
		}
		d.dropNodesLocked(b)
	}
}

// cloneCondLocked copies a conditional node's bodies for an executable graph.
func (d *device) cloneCondLocked(c *scond) *scond {
	cp := &scond{p: c.p}
	for _, b := range c.bodies {
		nb := d.cloneLocked(b, false)
		cp.bodies = append(cp.bodies, nb)
	}
	return cp
}

// hasConditional reports whether g has a conditional node.
func hasConditional(g *sgraph) bool {
	return slices.ContainsFunc(g.nodes, func(n *snode) bool { return n.cond != nil })
}

// refuseConditionalsLocked refuses what CUDA forbids of a graph with conditional nodes (being
// cloned, or a child graph), and of a conditional node's body.
func (d *device) refuseConditionalsLocked(op string, g *sgraph, what string) error {
	if hasConditional(g) {
		return d.fail(op, cudaerr.NotSupported, "graph %#x has conditional nodes and cannot be %s", uintptr(g.h), what)
	}
	if g.body != nil {
		return d.fail(op, cudaerr.InvalidValue, "graph %#x is the body of conditional node %#x and cannot be %s", uintptr(g.h), uintptr(g.body.h), what)
	}
	return nil
}

// checkBodiesLocked checks, before instantiating g, that g is not a body and that every body
// holds only the node kinds CUDA allows there (kernel, empty, child graph, memset, copy,
// conditional).
func (d *device) checkBodiesLocked(op string, g *sgraph) error {
	if g.body != nil {
		return d.fail(op, cudaerr.InvalidValue, "graph %#x is the body of conditional node %#x: instantiate the graph that holds the node", uintptr(g.h), uintptr(g.body.h))
	}
	var check func(g *sgraph, inBody bool) error
	check = func(g *sgraph, inBody bool) error {
		for _, n := range g.nodes {
			switch n.typ {
			case backend.NodeKernel, backend.NodeEmpty, backend.NodeGraph, backend.NodeMemset, backend.NodeMemcpy, backend.NodeConditional:
			default:
				if inBody {
					return d.fail(op, cudaerr.InvalidValue, "node %#x of a conditional body is a %s node: bodies hold kernel, empty, child graph, memset, copy and conditional nodes only", uintptr(n.h), n.typ)
				}
			}
			if n.child != nil {
				if err := check(n.child, inBody); err != nil {
					return err
				}
			}
			if n.cond != nil {
				for _, b := range n.cond.bodies {
					if err := check(b, true); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	return check(g, false)
}

// planConditionalLocked plans a conditional node's bodies once; the returned work runs the
// body its variable picks, when the launch reaches the node.
func (d *device) planConditionalLocked(c *scond, s *stream, conds *condVals) func() {
	plans := make([][]step, len(c.bodies))
	for i, b := range c.bodies {
		plans[i], _ = d.planLocked(b, nil, s, conds)
	}
	p := c.p
	return func() {
		switch p.Type {
		case backend.CondIf:
			if v := conds.get(p.Handle); v != 0 {
				d.runPlan(plans[0])
			} else if len(plans) == 2 {
				d.runPlan(plans[1])
			}
		case backend.CondWhile:
			for conds.get(p.Handle) != 0 && d.fault.Load() == nil {
				d.runPlan(plans[0])
			}
		case backend.CondSwitch:
			if v := conds.get(p.Handle); int(v) < len(plans) {
				d.runPlan(plans[v])
			}
		}
	}
}

// mapBodies makes the nodes of orig's conditional bodies, at any depth, answer for their
// copies in clone (an executable graph's), so that the calls that change an executable
// graph's nodes reach those inside bodies too.
func mapBodies(byOrig map[backend.GraphNode]*snode, orig, clone *sgraph) {
	for i, n := range orig.nodes {
		if n.cond == nil || i >= len(clone.nodes) || clone.nodes[i].cond == nil {
			continue
		}
		for j, b := range n.cond.bodies {
			cb := clone.nodes[i].cond.bodies[j]
			for k, bn := range b.nodes {
				if k < len(cb.nodes) {
					byOrig[bn.h] = cb.nodes[k]
				}
			}
			mapBodies(byOrig, b, cb)
		}
	}
}

// sameConditional reports whether an update may take a's bodies in place of b's: the same
// handle, type and number of bodies, each with as many nodes.
func sameConditional(a, b *scond) bool {
	if a.p != b.p || len(a.bodies) != len(b.bodies) {
		return false
	}
	for i := range a.bodies {
		if len(a.bodies[i].nodes) != len(b.bodies[i].nodes) {
			return false
		}
	}
	return true
}

// writeCondDot draws a conditional node as a cluster of its bodies, each a cluster of its own.
func writeCondDot(b *strings.Builder, n *snode, id string) {
	fmt.Fprintf(b, "subgraph cluster_%s {\nlabel=%q;\n%s [shape=diamond,label=%q];\n", id, n.typ.String()+": "+n.label, id, n.cond.p.Type.String())
	for i, body := range n.cond.bodies {
		bid := fmt.Sprintf("%s_b%d", id, i)
		fmt.Fprintf(b, "subgraph cluster_%s {\nlabel=%q;\n", bid, fmt.Sprintf("body %d", i))
		writeDot(b, body, bid+"_")
		b.WriteString("}\n")
	}
	b.WriteString("}\n")
}

// oneInstantiationLocked refuses a second executable graph of a graph with conditional nodes
// while the first exists, as CUDA does.
func (d *device) oneInstantiationLocked(op string, g *sgraph) error {
	if !hasConditional(g) {
		return nil
	}
	for _, x := range d.graphs.execs {
		if x.from == g {
			return d.fail(op, cudaerr.InvalidValue, "graph %#x has conditional nodes and is already instantiated as %#x: destroy that executable graph first", uintptr(g.h), uintptr(x.h))
		}
	}
	return nil
}
