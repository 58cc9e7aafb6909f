//go:build linux

package remote_test

import (
	"slices"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// Parity steps of the per-kind node parameters (backend.GraphParamsDevice), run on the graph
// BuildGraph made, after ReadGraph and before RunGraph destroys it.
func init() {
	steps := []struct {
		name   string
		covers []string
		run    func(dv backend.Device, st *pstate) (any, error)
	}{
		{"GraphNodeParams", []string{"GraphMemsetNodeGetParams", "GraphMemsetNodeSetParams", "GraphMemcpyNodeGetParams",
			"GraphMemcpyNodeSetParams1D", "GraphKernelNodeSetParams", "GraphEventRecordNodeGetEvent", "GraphEventRecordNodeSetEvent",
			"GraphEventWaitNodeGetEvent", "GraphEventWaitNodeSetEvent", "GraphMemAllocNodeGetParams", "GraphMemFreeNodeGetParams",
			"GraphChildGraphNodeGetGraph"}, graphNodeParams},
		{"GraphNodeWrongKind", nil, func(dv backend.Device, st *pstate) (any, error) {
			return dv.GraphMemsetNodeGetParams(st.kn)
		}},
		{"GraphKernelNodeAttrs", []string{"GraphKernelNodeGetAttrs", "GraphKernelNodeSetAttrs", "GraphKernelNodeCopyAttributes"}, func(dv backend.Device, st *pstate) (any, error) {
			if err := dv.GraphKernelNodeSetAttrs(st.kn, backend.LaunchAttrs{MemSyncDomain: 1}); err != nil {
				return nil, err
			}
			if err := dv.GraphKernelNodeCopyAttributes(st.kn, st.kn); err != nil {
				return nil, err
			}
			a, err := dv.GraphKernelNodeGetAttrs(st.kn)
			_, wrong := dv.GraphKernelNodeGetAttrs(st.set)
			return []any{a, errText(wrong)}, err
		}},
		{"GraphHostCopyParams", []string{"GraphAddMemcpyNode1D"}, graphHostCopyParams},
		{"GraphExecNodeParams", []string{"GraphExecMemsetNodeSetParams", "GraphExecMemcpyNodeSetParams1D", "GraphExecChildGraphNodeSetParams",
			"GraphExecEventRecordNodeSetEvent", "GraphExecEventWaitNodeSetEvent"}, graphExecNodeParams},
	}
	i := slices.IndexFunc(paritySteps, func(s struct {
		name   string
		covers []string
		run    func(dv backend.Device, st *pstate) (any, error)
	}) bool {
		return s.name == "ReadGraph"
	})
	paritySteps = slices.Insert(paritySteps, i+1, steps...)
	refusedRemotely["GraphHostNodeSetParams"] = struct {
		why string
		run func(dv backend.Device) error
	}{"the function is a closure of the parent", func(dv backend.Device) error { return dv.GraphHostNodeSetParams(1, 1, func() {}) }}
	refusedRemotely["GraphExecHostNodeSetParams"] = struct {
		why string
		run func(dv backend.Device) error
	}{"the function is a closure of the parent", func(dv backend.Device) error { return dv.GraphExecHostNodeSetParams(1, 1, func() {}) }}
}

// nodeOfType is g's first node of type t.
func nodeOfType(dv backend.Device, g backend.Graph, t backend.NodeType) (backend.GraphNode, error) {
	nodes, err := dv.GraphNodes(g)
	if err != nil {
		return 0, err
	}
	for _, n := range nodes {
		if typ, err := dv.GraphNodeType(n); err != nil || typ == t {
			return n, err
		}
	}
	return 0, nil
}

func graphNodeParams(dv backend.Device, st *pstate) (any, error) {
	var out []any
	ms := backend.MemsetNode{Dst: st.p, Pitch: 32, Value: 0x0102, ElementSize: 2, Width: 8, Height: 2}
	if err := dv.GraphMemsetNodeSetParams(st.set, ms); err != nil {
		return nil, err
	}
	got, err := dv.GraphMemsetNodeGetParams(st.set)
	if err != nil {
		return nil, err
	}
	out = append(out, got)
	cp, err := nodeOfType(dv, st.g, backend.NodeMemcpy)
	if err != nil {
		return nil, err
	}
	if err := dv.GraphMemcpyNodeSetParams1D(cp, backend.CopyNode{Dst: uint64(st.q), Src: uint64(st.p), Bytes: 32, Kind: backend.CopyDefault}); err != nil {
		return nil, err
	}
	c, err := dv.GraphMemcpyNodeGetParams(cp)
	if err != nil {
		return nil, err
	}
	kp := backend.KernelNode{Kernel: st.k, Grid: backend.Dim3{X: 1, Y: 1, Z: 1}, Block: backend.Dim3{X: 16, Y: 1, Z: 1},
		Args: []backend.Arg{{Kind: backend.ArgPtr, Bits: uint64(st.q)}, {Kind: backend.ArgInt32, Bits: 16}, {Kind: backend.ArgInt32, Bits: 7}}}
	if err := dv.GraphKernelNodeSetParams(st.kn, kp); err != nil {
		return nil, err
	}
	rec, err := nodeOfType(dv, st.g, backend.NodeEventRecord)
	if err != nil {
		return nil, err
	}
	wait, err := nodeOfType(dv, st.g, backend.NodeWaitEvent)
	if err != nil {
		return nil, err
	}
	if err := dv.GraphEventRecordNodeSetEvent(rec, st.e); err != nil {
		return nil, err
	}
	if err := dv.GraphEventWaitNodeSetEvent(wait, st.e2); err != nil {
		return nil, err
	}
	re, err := dv.GraphEventRecordNodeGetEvent(rec)
	if err != nil {
		return nil, err
	}
	we, err := dv.GraphEventWaitNodeGetEvent(wait)
	if err != nil {
		return nil, err
	}
	a, err := dv.GraphMemAllocNodeGetParams(st.alloc)
	if err != nil {
		return nil, err
	}
	free, err := nodeOfType(dv, st.g, backend.NodeMemFree)
	if err != nil {
		return nil, err
	}
	fp, err := dv.GraphMemFreeNodeGetParams(free)
	if err != nil {
		return nil, err
	}
	child, err := nodeOfType(dv, st.g, backend.NodeGraph)
	if err != nil {
		return nil, err
	}
	cg, err := dv.GraphChildGraphNodeGetGraph(child)
	if err != nil {
		return nil, err
	}
	inner, err := dv.GraphNodes(cg)
	return append(out, c, re == st.e, we == st.e2, a, fp == st.allocP, len(inner)), err
}

// graphHostCopyParams reads and changes a copy node from host memory: its host side is the
// caller's address on either side.
func graphHostCopyParams(dv backend.Device, st *pstate) (any, error) {
	hp, err := dv.HostAlloc(256, 0)
	if err != nil {
		return nil, err
	}
	defer dv.HostFree(hp)
	g, err := dv.GraphCreate()
	if err != nil {
		return nil, err
	}
	defer dv.GraphDestroy(g)
	n, err := dv.GraphAddCopyHtoD(g, nil, st.p, hp, 128)
	if err != nil {
		return nil, err
	}
	before, err := dv.GraphMemcpyNodeGetParams(n)
	if err != nil {
		return nil, err
	}
	at := uint64(uintptr(unsafe.Add(hp, 128)))
	if err := dv.GraphMemcpyNodeSetParams1D(n, backend.CopyNode{Dst: at, Src: uint64(st.p), Bytes: 64, Kind: backend.CopyDeviceToHost}); err != nil {
		return nil, err
	}
	after, err := dv.GraphMemcpyNodeGetParams(n)
	if err != nil {
		return nil, err
	}
	n2, err := dv.GraphAddMemcpyNode1D(g, []backend.GraphNode{n}, backend.CopyNode{Dst: uint64(st.q), Src: at, Bytes: 64, Kind: backend.CopyHostToDevice})
	if err != nil {
		return nil, err
	}
	added, err := dv.GraphMemcpyNodeGetParams(n2)
	if err != nil {
		return nil, err
	}
	return []any{before.Src == uint64(uintptr(hp)), before.Dst, before.Bytes, before.Kind, after.Dst == at, after.Src, after.Kind,
		added.Src == at, added.Dst, added.Kind}, nil
}

func graphExecNodeParams(dv backend.Device, st *pstate) (any, error) {
	x, err := dv.GraphInstantiate(st.g, 0)
	if err != nil {
		return nil, err
	}
	defer dv.GraphExecDestroy(x)
	ms := backend.MemsetNode{Dst: st.p, Pitch: 32, Value: 9, ElementSize: 2, Width: 8, Height: 2} // GraphNodeParams' shape
	if err := dv.GraphExecMemsetNodeSetParams(x, st.set, ms); err != nil {
		return nil, err
	}
	cp, err := nodeOfType(dv, st.g, backend.NodeMemcpy)
	if err != nil {
		return nil, err
	}
	if err := dv.GraphExecMemcpyNodeSetParams1D(x, cp, backend.CopyNode{Dst: uint64(st.q), Src: uint64(st.p), Bytes: 64, Kind: backend.CopyDeviceToDevice}); err != nil {
		return nil, err
	}
	child, err := nodeOfType(dv, st.g, backend.NodeGraph)
	if err != nil {
		return nil, err
	}
	if err := dv.GraphExecChildGraphNodeSetParams(x, child, st.captured); err != nil {
		return nil, err
	}
	rec, err := nodeOfType(dv, st.g, backend.NodeEventRecord)
	if err != nil {
		return nil, err
	}
	wait, err := nodeOfType(dv, st.g, backend.NodeWaitEvent)
	if err != nil {
		return nil, err
	}
	if err := dv.GraphExecEventRecordNodeSetEvent(x, rec, st.e); err != nil {
		return nil, err
	}
	if err := dv.GraphExecEventWaitNodeSetEvent(x, wait, st.e2); err != nil {
		return nil, err
	}
	wrong := dv.GraphExecMemsetNodeSetParams(x, st.kn, ms)
	reshaped := dv.GraphExecMemsetNodeSetParams(x, st.set, backend.MemsetNode{Dst: st.p, Value: 9, ElementSize: 1, Width: 64, Height: 1})
	return []string{errText(wrong), errText(reshaped)}, nil
}
