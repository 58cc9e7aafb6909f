package sim

import (
	"fmt"
	"os"
	"strings"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// GraphInstantiateWithParams instantiates as GraphInstantiate does and says why and at which
// node it failed; with InstantiateUpload it uploads the new executable graph on upload.
func (d *device) GraphInstantiateWithParams(h backend.Graph, flags uint64, upload backend.Stream) (backend.GraphExec, backend.InstantiateInfo, error) {
	const op = "cudaGraphInstantiateWithParams"
	failed := backend.InstantiateInfo{Result: backend.InstantiateError}
	if err := d.alive(op); err != nil {
		return 0, failed, err
	}
	if flags&backend.InstantiateUpload != 0 {
		if _, err := d.ownStream(op, upload); err != nil {
			return 0, failed, err
		}
	}
	if flags&backend.InstantiateDeviceLaunch != 0 {
		gs := &d.graphs
		gs.mu.Lock()
		gs.init()
		var bad *snode
		if g := gs.graphs[h]; g != nil {
			for _, n := range g.nodes {
				switch n.typ {
				case backend.NodeKernel, backend.NodeMemcpy, backend.NodeMemset, backend.NodeEmpty:
					continue
				}
				bad = n
				break
			}
		}
		gs.mu.Unlock()
		if bad != nil {
			info := backend.InstantiateInfo{Result: backend.InstantiateNodeOperationNotSupported, ErrorNode: bad.h}
			return 0, info, d.fail(op, cudaerr.InvalidValue, "a device-launchable graph may only hold kernel, copy, memset and empty nodes, not %s", bad.typ)
		}
	}
	x, err := d.GraphInstantiate(h, flags)
	if err != nil {
		return 0, failed, err
	}
	if flags&backend.InstantiateUpload != 0 {
		if err := d.GraphUpload(x, upload); err != nil {
			_ = d.GraphExecDestroy(x)
			return 0, failed, err
		}
	}
	return x, backend.InstantiateInfo{Result: backend.InstantiateSuccess}, nil
}

// GraphExecFlags is the flags the executable graph was instantiated with.
func (d *device) GraphExecFlags(h backend.GraphExec) (uint64, error) {
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	x, err := d.execLocked("cudaGraphExecGetFlags", h)
	if err != nil {
		return 0, err
	}
	// The runtime does not report UseNodePriority among the flags (CUDA 13.0 on an H200).
	return x.flags &^ backend.InstantiateUseNodePriority, nil
}

// GraphDebugDotFlags writes the graph in Graphviz DOT; DotHandles (or DotVerbose) adds each
// top-level node's handle as its tooltip.
func (d *device) GraphDebugDotFlags(h backend.Graph, path string, flags uint32) error {
	const op = "cudaGraphDebugDotPrint"
	if flags&^backend.DotAll != 0 {
		return d.fail(op, cudaerr.InvalidValue, "unknown DOT flags %#x", flags&^backend.DotAll)
	}
	gs := &d.graphs
	gs.mu.Lock()
	gs.init()
	g, err := d.graphLocked(op, h)
	var b strings.Builder
	if err == nil {
		fmt.Fprintf(&b, "digraph sim_graph_%d {\n", uintptr(h))
		writeDot(&b, g, "n")
		if flags&(backend.DotHandles|backend.DotVerbose) != 0 {
			for i, n := range g.nodes {
				fmt.Fprintf(&b, "n%d [tooltip=\"node %#x\"];\n", i, uintptr(n.h))
			}
		}
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
