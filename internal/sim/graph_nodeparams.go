package sim

import (
	"slices"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// The generic node-parameter calls (cudaGraphNodeSetParams, cudaGraphExecNodeSetParams) for
// the kinds cudaGraphAddNode takes here, and capture into an existing graph.

// GraphNodeSetParams changes a node's parameters in its graph.
func (d *device) GraphNodeSetParams(nh backend.GraphNode, p backend.NodeParams) error {
	const op = "cudaGraphNodeSetParams"
	if err := d.alive(op); err != nil {
		return err
	}
	d.graphs.mu.Lock()
	d.graphs.init()
	n := d.graphs.nodes[nh]
	d.graphs.mu.Unlock()
	if n == nil {
		return d.fail(op, cudaerr.InvalidValue, "node %#x is not a live node of device %d", uintptr(nh), d.ordinal)
	}
	return d.setNodeParams(op, n, p, false)
}

// GraphExecNodeSetParams changes a node's parameters in an executable graph.
func (d *device) GraphExecNodeSetParams(xh backend.GraphExec, nh backend.GraphNode, p backend.NodeParams) error {
	const op = "cudaGraphExecNodeSetParams"
	if err := d.alive(op); err != nil {
		return err
	}
	d.graphs.mu.Lock()
	d.graphs.init()
	x, err := d.execLocked(op, xh)
	var n *snode
	if err == nil {
		if n = x.byOrig[nh]; n == nil {
			err = d.fail(op, cudaerr.InvalidValue, "node %#x is not a node of the graph executable %#x was made from", uintptr(nh), uintptr(xh))
		}
	}
	d.graphs.mu.Unlock()
	if err != nil {
		return err
	}
	return d.setNodeParams(op, n, p, true)
}

// setNodeParams checks p against n's type, then takes it into n. An executable graph's kernel
// node keeps to its module's kernels, as CUDA's does.
func (d *device) setNodeParams(op string, n *snode, p backend.NodeParams, inExec bool) error {
	if p.Type != n.typ {
		return d.fail(op, cudaerr.InvalidValue, "node %#x is a %s node, given %s parameters", uintptr(n.orig), n.typ, p.Type)
	}
	switch p.Type {
	case backend.NodeKernel:
		k, err := d.graphKernel(op, p.Kernel)
		if err != nil {
			return err
		}
		d.graphs.mu.Lock()
		defer d.graphs.mu.Unlock()
		if inExec && n.kern != nil && n.kern.mod != k.mod {
			return d.fail(op, cudaerr.InvalidValue, "kernel node %#x runs a kernel of another module than %q", uintptr(n.orig), k.name)
		}
		kp := p.Kernel
		kp.Args = slices.Clone(kp.Args)
		n.kern, n.params, n.label = k, kp, k.label
		return nil
	case backend.NodeMemset:
		if err := d.checkMemsetNode(op, p.Memset); err != nil {
			return err
		}
		d.graphs.mu.Lock()
		defer d.graphs.mu.Unlock()
		d.setMemset(n, p.Memset)
		return nil
	case backend.NodeEmpty:
		return nil
	}
	return d.fail(op, cudaerr.NotSupported, "the simulator's %s does not change %s nodes", op, p.Type)
}

// StreamBeginCaptureToGraph starts capturing s into the existing graph g after deps.
func (d *device) StreamBeginCaptureToGraph(sh backend.Stream, gh backend.Graph, deps []backend.GraphNode, mode backend.CaptureMode) error {
	const op = "cudaStreamBeginCaptureToGraph"
	if err := d.alive(op); err != nil {
		return err
	}
	if sh == 0 {
		return d.fail(op, cudaerr.StreamCaptureUnsupported, "the legacy default stream cannot be captured")
	}
	s, err := d.ownStream(op, sh)
	if err != nil {
		return err
	}
	if mode < backend.CaptureGlobal || mode > backend.CaptureRelaxed {
		return d.fail(op, cudaerr.InvalidValue, "unknown capture mode %d", mode)
	}
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	if gs.captures[s] != nil {
		return d.fail(op, cudaerr.IllegalState, "stream %#x is already capturing", uintptr(sh))
	}
	g, err := d.graphLocked(op, gh)
	if err != nil {
		return err
	}
	for _, c := range gs.captures {
		if c.graph == g {
			return d.fail(op, cudaerr.IllegalState, "graph %#x is already being captured into", uintptr(gh))
		}
	}
	tail, err := d.depsLocked(op, g, deps)
	if err != nil {
		return err
	}
	gs.captures[s] = &capture{id: uint64(d.b.nextHandle()), mode: mode, origin: s, graph: g, tails: map[*stream][]*snode{s: tail}, into: true}
	return nil
}
