package sim

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// GraphInstantiate makes an executable graph: a private copy of g that answers to g's node
// handles.
func (d *device) GraphInstantiate(h backend.Graph, flags uint64) (backend.GraphExec, error) {
	const op = "cudaGraphInstantiateWithFlags"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	known := backend.InstantiateAutoFreeOnLaunch | backend.InstantiateUpload | backend.InstantiateDeviceLaunch | backend.InstantiateUseNodePriority
	if flags&^known != 0 {
		return 0, d.fail(op, cudaerr.InvalidValue, "unknown instantiate flags %#x", flags)
	}
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	g, err := d.graphLocked(op, h)
	if err != nil {
		return 0, err
	}
	if flags&backend.InstantiateDeviceLaunch != 0 {
		for _, n := range g.nodes {
			if n.typ != backend.NodeKernel && n.typ != backend.NodeMemcpy && n.typ != backend.NodeMemset && n.typ != backend.NodeEmpty {
				return 0, d.fail(op, cudaerr.InvalidValue, "a device-launchable graph may only hold kernel, copy, memset and empty nodes, not %s", n.typ)
			}
		}
	}
	if err := d.checkBodiesLocked(op, g); err != nil {
		return 0, err
	}
	if err := d.oneInstantiationLocked(op, g); err != nil {
		return 0, err
	}
	x := &sexec{h: backend.GraphExec(d.b.nextHandle()), flags: flags, disabled: map[*snode]bool{}, from: g}
	x.g = d.cloneLocked(g, false)
	x.conds = newCondVals(x.g)
	x.byOrig = make(map[backend.GraphNode]*snode, len(g.nodes))
	for i, n := range g.nodes {
		x.byOrig[n.h] = x.g.nodes[i]
	}
	mapBodies(x.byOrig, g, x.g)
	gs.execs[x.h] = x
	return x.h, nil
}

func (d *device) execLocked(op string, h backend.GraphExec) (*sexec, error) {
	x := d.graphs.execs[h]
	if x == nil {
		return nil, d.fail(op, cudaerr.InvalidValue, "executable graph %#x is not live on device %d (destroyed, or never instantiated)", uintptr(h), d.ordinal)
	}
	return x, nil
}

// GraphExecDestroy destroys an executable graph. Launches already queued still run.
func (d *device) GraphExecDestroy(h backend.GraphExec) error {
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	x, err := d.execLocked("cudaGraphExecDestroy", h)
	if err != nil {
		return err
	}
	delete(gs.execs, h)
	d.dropNodesLocked(x.g)
	return nil
}

// GraphUpload has nothing to upload in the simulator: it checks its arguments and queues a
// no-op, so that it orders like the real call.
func (d *device) GraphUpload(h backend.GraphExec, sh backend.Stream) error {
	const op = "cudaGraphUpload"
	if err := d.alive(op); err != nil {
		return err
	}
	s, err := d.ownStream(op, sh)
	if err != nil {
		return err
	}
	d.graphs.mu.Lock()
	d.graphs.init()
	_, err = d.execLocked(op, h)
	d.graphs.mu.Unlock()
	if err != nil {
		return err
	}
	d.submit(s, &task{name: "graph upload"})
	return nil
}

// GraphLaunchN queues n runs of the executable graph on s, one GraphLaunch each, and stops at
// the first refused.
func (d *device) GraphLaunchN(h backend.GraphExec, sh backend.Stream, n int) (int, error) {
	for i := range max(n, 0) {
		if err := d.GraphLaunch(h, sh); err != nil {
			return i, err
		}
	}
	return max(n, 0), nil
}

// GraphLaunch queues one run of the executable graph on s. The node parameters are those of
// the time of the call: later updates apply to later launches.
func (d *device) GraphLaunch(h backend.GraphExec, sh backend.Stream) error {
	const op = "cudaGraphLaunch"
	if err := d.alive(op); err != nil {
		return err
	}
	s, err := d.ownStream(op, sh)
	if err != nil {
		return err
	}
	gs := &d.graphs
	gs.mu.Lock()
	gs.init()
	x, err := d.execLocked(op, h)
	if err != nil {
		gs.mu.Unlock()
		return err
	}
	if c := gs.captures[s]; c != nil {
		gs.mu.Unlock()
		return d.fail(op, cudaerr.StreamCaptureUnsupported, "launching a graph into a stream capture is not simulated")
	}
	// An allocation is live from its alloc node's launch to the launch of a free node for it,
	// in this graph or another; a graph cannot allocate it again while it is live.
	for _, n := range x.g.nodes {
		if n.typ == backend.NodeMemAlloc && n.alloc.live && x.flags&backend.InstantiateAutoFreeOnLaunch == 0 {
			gs.mu.Unlock()
			return d.fail(op, cudaerr.InvalidValue, "the graph's allocation at %#x from an earlier launch was never freed (free it, or instantiate with AutoFreeOnLaunch)", uintptr(n.alloc.ptr))
		}
	}
	for _, n := range x.g.nodes {
		if n.typ == backend.NodeMemAlloc {
			n.alloc.live, n.alloc.backed = true, true
		}
	}
	gs.noteMemLocked() // the launch's peak: its allocations made, none freed yet
	for _, n := range x.g.nodes {
		if n.typ == backend.NodeMemFree {
			n.alloc.live = false
		}
	}
	conds := x.conds
	plan, records := d.planLocked(x.g, x.disabled, s, conds)
	pinned := d.pinUsersLocked(x.g, nil) // the launch keeps the graph's user objects alive
	gs.mu.Unlock()
	seq := d.submit(s, &task{name: fmt.Sprintf("graph %#x", uintptr(h)), run: func() {
		defer d.unpinUsers(pinned)
		conds.launch()
		d.runPlan(plan)
	}})
	// Event record nodes complete when the whole launch has: later than on a GPU, never earlier.
	for _, ev := range records {
		rec := &record{s: newStream(d, 0, backend.StreamNonBlocking, leastPriority)}
		rec.seq = d.submit(rec.s, &task{name: "graph event record", always: true, waits: []waitPoint{{s, seq}},
			run: func() { rec.at = time.Now() }})
		ev.mu.Lock()
		ev.rec = rec
		ev.mu.Unlock()
	}
	return nil
}

// step is one node of a launch: its work, with the parameters of the launch's time.
type step struct {
	deps []int
	work func()
}

// planLocked snapshots g's nodes for one launch on s; it returns the events the launch records.
func (d *device) planLocked(g *sgraph, disabled map[*snode]bool, s *stream, conds *condVals) ([]step, []*event) {
	idx := make(map[*snode]int, len(g.nodes))
	plan := make([]step, len(g.nodes))
	var records []*event
	for i, n := range g.nodes {
		idx[n] = i
		for _, dep := range n.deps {
			plan[i].deps = append(plan[i].deps, idx[dep])
		}
		if disabled[n] {
			continue
		}
		switch n.typ {
		case backend.NodeKernel:
			k, p := n.kern, n.params
			p.Args = slices.Clone(p.Args)
			plan[i].work = func() { d.runKernelIn(k, s, p.Grid, p.Block, p.SharedMem, p.Args, conds.sim()) }
		case backend.NodeConditional:
			plan[i].work = d.planConditionalLocked(n.cond, s, conds)
		case backend.NodeGraph:
			sub, subRecords := d.planLocked(n.child, nil, s, conds)
			records = append(records, subRecords...)
			plan[i].work = func() { d.runPlan(sub) }
		case backend.NodeEventRecord:
			records = append(records, n.ev)
		case backend.NodeWaitEvent:
			if rec := n.ev.current(); rec != nil {
				plan[i].work = func() { rec.s.wait(rec.seq) }
			}
		default:
			plan[i].work = n.run
		}
	}
	return plan, records
}

// runPlan runs a launch's nodes, each on its own goroutine once its dependencies are done.
// After a fault the remaining nodes are skipped, as a GPU drops the rest of the work.
func (d *device) runPlan(plan []step) {
	done := make([]chan struct{}, len(plan))
	for i := range done {
		done[i] = make(chan struct{})
	}
	var wg sync.WaitGroup
	for i, st := range plan {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done[i])
			for _, dep := range st.deps {
				<-done[dep]
			}
			if st.work == nil || d.fault.Load() != nil {
				return
			}
			defer func() {
				if r := recover(); r != nil {
					d.setFault(cudaerr.LaunchFailure, fmt.Sprintf("graph node panicked: %v", r))
				}
			}()
			st.work()
		}()
	}
	wg.Wait()
}

// GraphExecKernelNodeSetParams changes a kernel node's parameters for later launches. The
// kernel may not change to one of another device.
func (d *device) GraphExecKernelNodeSetParams(h backend.GraphExec, nh backend.GraphNode, p backend.KernelNode) error {
	const op = "cudaGraphExecKernelNodeSetParams"
	k, err := d.graphKernel(op, p)
	if err != nil {
		return err
	}
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	x, err := d.execLocked(op, h)
	if err != nil {
		return err
	}
	n := x.byOrig[nh]
	if n == nil || n.typ != backend.NodeKernel {
		return d.fail(op, cudaerr.InvalidValue, "node %#x is not a kernel node of the graph executable %#x was made from", uintptr(nh), uintptr(h))
	}
	p.Args = slices.Clone(p.Args)
	n.kern, n.params, n.label = k, p, k.label
	return nil
}

// GraphNodeSetEnabled enables or disables a node for later launches.
func (d *device) GraphNodeSetEnabled(h backend.GraphExec, nh backend.GraphNode, enabled bool) error {
	const op = "cudaGraphNodeSetEnabled"
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	x, err := d.execLocked(op, h)
	if err != nil {
		return err
	}
	n := x.byOrig[nh]
	if n == nil {
		return d.fail(op, cudaerr.InvalidValue, "node %#x is not a node of the graph executable %#x was made from", uintptr(nh), uintptr(h))
	}
	switch n.typ {
	case backend.NodeKernel, backend.NodeMemcpy, backend.NodeMemset:
	default:
		return d.fail(op, cudaerr.InvalidValue, "only kernel, copy and memset nodes can be disabled, not %s nodes", n.typ)
	}
	if enabled {
		delete(x.disabled, n)
	} else {
		x.disabled[n] = true
	}
	return nil
}

// GraphExecUpdate takes g's node parameters into x when g has x's topology: the same nodes,
// matched in the order they were added, of the same types, with the same edges; kernel nodes
// may change parameters and kernels of the same module.
func (d *device) GraphExecUpdate(h backend.GraphExec, gh backend.Graph) (backend.UpdateInfo, error) {
	const op = "cudaGraphExecUpdate"
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	x, err := d.execLocked(op, h)
	if err != nil {
		return backend.UpdateInfo{Result: backend.UpdateError}, err
	}
	g, err := d.graphLocked(op, gh)
	if err != nil {
		return backend.UpdateInfo{Result: backend.UpdateError}, err
	}
	refuse := func(r backend.UpdateResult, n, from *snode) (backend.UpdateInfo, error) {
		info := backend.UpdateInfo{Result: r}
		if n != nil {
			info.ErrorNode = n.h
		}
		if from != nil {
			info.FromNode = from.orig
		}
		return info, d.fail(op, cudaerr.GraphExecUpdateFailure, "%s", r)
	}
	if len(g.nodes) != len(x.g.nodes) {
		return refuse(backend.UpdateTopologyChanged, nil, nil)
	}
	pos := func(nodes []*snode, n *snode) int { return slices.Index(nodes, n) }
	for i, n := range g.nodes {
		old := x.g.nodes[i]
		if n.typ != old.typ {
			return refuse(backend.UpdateNodeTypeChanged, n, old)
		}
		if len(n.deps) != len(old.deps) {
			return refuse(backend.UpdateTopologyChanged, n, old)
		}
		for _, dep := range n.deps {
			if !slices.ContainsFunc(old.deps, func(o *snode) bool { return pos(x.g.nodes, o) == pos(g.nodes, dep) }) {
				return refuse(backend.UpdateTopologyChanged, n, old)
			}
		}
		if n.typ == backend.NodeKernel && n.kern.mod != old.kern.mod {
			return refuse(backend.UpdateUnsupportedFunctionChange, n, old)
		}
		if (n.typ == backend.NodeMemAlloc || n.typ == backend.NodeMemFree) && n.alloc != old.alloc {
			return refuse(backend.UpdateParametersChanged, n, old)
		}
		if n.typ == backend.NodeMemcpy && copySides(n) != "" && copySides(old) != "" && copySides(n) != copySides(old) {
			return refuse(backend.UpdateParametersChanged, n, old) // a copy's memory types cannot change
		}
		if n.typ == backend.NodeMemcpy && changedMultidim(old.c3, n.c3) {
			return refuse(backend.UpdateParametersChanged, n, old) // nor an array or box copy's parameters
		}
		if n.typ == backend.NodeGraph && len(n.child.nodes) != len(old.child.nodes) {
			return refuse(backend.UpdateTopologyChanged, n, old)
		}
		if n.typ == backend.NodeConditional && !sameConditional(n.cond, old.cond) {
			return refuse(backend.UpdateParametersChanged, n, old)
		}
	}
	for i, n := range g.nodes {
		old := x.g.nodes[i]
		old.kern, old.params, old.run, old.ev, old.label = n.kern, n.params, n.run, n.ev, n.label
		old.cp, old.c3, old.ms = n.cp, n.c3, n.ms
		old.params.Args = slices.Clone(n.params.Args)
		if n.child != nil {
			d.dropNodesLocked(old.child)
			old.child = d.cloneLocked(n.child, false)
		}
		if n.cond != nil {
			d.dropBodiesLocked(old.cond)
			old.cond = d.cloneCondLocked(n.cond)
		}
		x.byOrig[n.h] = old
	}
	mapBodies(x.byOrig, g, x.g)
	return backend.UpdateInfo{Result: backend.UpdateSuccess}, nil
}
