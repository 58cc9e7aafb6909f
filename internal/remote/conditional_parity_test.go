//go:build linux

package remote_test

import (
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// countdown(p, h) decrements p[0], counts the run in p[1] and keeps the conditional h set
// while p[0] > 0: the body of a while node that iterates p[0] times.
func countdown(c *cuda.KernelCall) error {
	p := cuda.SimSlice[int32](c, 0, 2)
	p[0]--
	p[1]++
	v := uint32(0)
	if p[0] > 0 {
		v = 1
	}
	cuda.SimSetConditional(c, c.Handle(1), v)
	return nil
}

func init() {
	testKernels["countdown"] = countdown
	paritySteps = append(paritySteps, conditionalSteps...)
}

// conditionalSteps cover the conditional-node and generic-node calls: a while loop built
// with cudaGraphAddNode, a kernel captured into the graph, parameters changed in the graph
// and in its executable graph, and the refusals of bad input.
var conditionalSteps = []struct {
	name   string
	covers []string
	run    func(dv backend.Device, st *pstate) (any, error)
}{
	{"Conditionals", []string{"GraphConditionalHandleCreate", "GraphAddNode", "GraphNodeSetParams", "GraphExecNodeSetParams", "StreamBeginCaptureToGraph"}, func(dv backend.Device, st *pstate) (any, error) {
		p, err := dv.Malloc(64)
		if err != nil {
			return nil, err
		}
		defer dv.Free(p)
		hp, err := dv.HostAlloc(64, 0)
		if err != nil {
			return nil, err
		}
		defer dv.HostFree(hp)
		s, err := dv.StreamCreate(backend.StreamNonBlocking, 0)
		if err != nil {
			return nil, err
		}
		defer dv.StreamDestroy(s)
		mod, err := dv.LoadModule(backend.ModuleSpec{SimKernels: map[string]backend.SimKernel{"fill": testKernels["fill"], "countdown": countdown}})
		if err != nil {
			return nil, err
		}
		defer dv.UnloadModule(mod)
		kf, err := dv.ModuleKernel(mod, "fill")
		if err != nil {
			return nil, err
		}
		kc, err := dv.ModuleKernel(mod, "countdown")
		if err != nil {
			return nil, err
		}
		g, err := dv.GraphCreate()
		if err != nil {
			return nil, err
		}
		defer dv.GraphDestroy(g)
		h, err := dv.GraphConditionalHandleCreate(g, 1, backend.CondAssignDefault)
		if err != nil {
			return nil, err
		}
		set, _, err := dv.GraphAddNode(g, nil, backend.NodeParams{Type: backend.NodeMemset, Memset: backend.MemsetNode{Dst: p, Value: 7, ElementSize: 1, Width: 64, Height: 1}})
		if err != nil {
			return nil, err
		}
		if err := dv.GraphNodeSetParams(set, backend.NodeParams{Type: backend.NodeMemset, Memset: backend.MemsetNode{Dst: p, ElementSize: 1, Width: 64, Height: 1}}); err != nil {
			return nil, err
		}
		if err := dv.StreamBeginCaptureToGraph(s, g, []backend.GraphNode{set}, backend.CaptureGlobal); err != nil {
			return nil, err
		}
		one := backend.Dim3{X: 1, Y: 1, Z: 1}
		fill := func(v int32) []backend.Arg {
			return []backend.Arg{{Kind: backend.ArgPtr, Bits: uint64(p)}, {Kind: backend.ArgInt32, Bits: 1}, {Kind: backend.ArgInt32, Bits: uint64(v)}}
		}
		if err := dv.Launch(kf, one, one, 0, s, fill(5)); err != nil {
			return nil, err
		}
		captured, err := dv.StreamEndCapture(s)
		if err != nil {
			return nil, err
		}
		nodes, err := dv.GraphNodes(g)
		if err != nil {
			return nil, err
		}
		fn := nodes[len(nodes)-1]
		loop, bodies, err := dv.GraphAddNode(g, []backend.GraphNode{fn}, backend.NodeParams{Type: backend.NodeConditional,
			Conditional: backend.ConditionalNode{Handle: h, Type: backend.CondWhile, Size: 1}})
		if err != nil {
			return nil, err
		}
		body, _, err := dv.GraphAddNode(bodies[0], nil, backend.NodeParams{Type: backend.NodeKernel, Kernel: backend.KernelNode{Kernel: kc, Grid: one, Block: one,
			Args: []backend.Arg{{Kind: backend.ArgPtr, Bits: uint64(p)}, {Kind: backend.ArgUint64, Bits: uint64(h)}}}})
		if err != nil {
			return nil, err
		}
		x, err := dv.GraphInstantiate(g, 0)
		if err != nil {
			return nil, err
		}
		defer dv.GraphExecDestroy(x)
		run := func() ([2]int32, error) {
			if err := dv.GraphLaunch(x, s); err != nil {
				return [2]int32{}, err
			}
			if err := dv.CopyDtoH(hp, p, 8, s); err != nil {
				return [2]int32{}, err
			}
			err := dv.StreamSynchronize(s)
			return *(*[2]int32)(hp), err
		}
		first, err := run()
		if err != nil {
			return nil, err
		}
		if err := dv.GraphExecNodeSetParams(x, fn, backend.NodeParams{Type: backend.NodeKernel, Kernel: backend.KernelNode{Kernel: kf, Grid: one, Block: one, Args: fill(3)}}); err != nil {
			return nil, err
		}
		second, err := run()
		if err != nil {
			return nil, err
		}
		// Bad input: a handle of another graph, parameters of another kind, a body too many.
		other, err := dv.GraphCreate()
		if err != nil {
			return nil, err
		}
		defer dv.GraphDestroy(other)
		_, _, foreign := dv.GraphAddNode(other, nil, backend.NodeParams{Type: backend.NodeConditional, Conditional: backend.ConditionalNode{Handle: h, Type: backend.CondIf, Size: 1}})
		wrongKind := dv.GraphNodeSetParams(set, backend.NodeParams{Type: backend.NodeEmpty})
		_, _, tooMany := dv.GraphAddNode(g, nil, backend.NodeParams{Type: backend.NodeConditional, Conditional: backend.ConditionalNode{Handle: h, Type: backend.CondWhile, Size: 2}})
		return []any{h, set, captured == g, loop, len(bodies), body, first, second, errText(foreign), errText(wrongKind), errText(tooMany)}, nil
	}},
}
