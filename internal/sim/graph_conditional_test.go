package sim

import (
	"os"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// condKernels: count(p, h) decrements p[0], counts its run in p[1] and sets h to p[0] > 0;
// pick(p, h) sets h to p[0]; mark(p, i) adds one to p[i].
var condKernels = map[string]backend.SimKernel{
	"count": func(c *backend.KernelCall) error {
		p := cuda.SimSlice[int64](c, 0, 2)
		p[0]--
		p[1]++
		v := uint32(0)
		if p[0] > 0 {
			v = 1
		}
		cuda.SimSetConditional(c, c.Handle(1), v)
		return nil
	},
	"pick": func(c *backend.KernelCall) error {
		cuda.SimSetConditional(c, c.Handle(1), uint32(cuda.SimSlice[int64](c, 0, 1)[0]))
		return nil
	},
	"mark": func(c *backend.KernelCall) error {
		cuda.SimSlice[int64](c, 0, 8)[c.Uint64(1)]++
		return nil
	},
}

type condFixture struct {
	t  *testing.T
	d  backend.Device
	s  backend.Stream
	p  backend.DevicePtr
	ks map[string]backend.Kernel
}

func newCondFixture(t *testing.T) *condFixture {
	_, d, _ := open(t)
	return &condFixture{t: t, d: d, s: mkStream(t, d), p: malloc(t, d, 64), ks: kernels(t, d, condKernels)}
}

func (f *condFixture) kernel(name string, args ...backend.Arg) backend.NodeParams {
	one := backend.Dim3{X: 1, Y: 1, Z: 1}
	return backend.NodeParams{Type: backend.NodeKernel, Kernel: backend.KernelNode{Kernel: f.ks[name], Grid: one, Block: one, Args: args}}
}

func (f *condFixture) add(g backend.Graph, deps []backend.GraphNode, p backend.NodeParams) (backend.GraphNode, []backend.Graph) {
	f.t.Helper()
	n, bodies, err := f.d.GraphAddNode(g, deps, p)
	require.NoError(f.t, err)
	return n, bodies
}

func cond(h backend.ConditionalHandle, typ backend.CondType, size uint32) backend.NodeParams {
	return backend.NodeParams{Type: backend.NodeConditional, Conditional: backend.ConditionalNode{Handle: h, Type: typ, Size: size}}
}

// set writes vals at the start of f.p (the rest zero) and waits.
func (f *condFixture) set(vals ...int64) {
	f.t.Helper()
	buf := make([]int64, 8)
	copy(buf, vals)
	require.NoError(f.t, f.d.CopyHtoD(f.p, unsafe.Pointer(&buf[0]), 64, f.s))
	require.NoError(f.t, f.d.StreamSynchronize(f.s))
}

func (f *condFixture) launch(x backend.GraphExec) []int64 {
	f.t.Helper()
	require.NoError(f.t, f.d.GraphLaunch(x, f.s))
	out := make([]int64, 8)
	require.NoError(f.t, f.d.CopyDtoH(unsafe.Pointer(&out[0]), f.p, 64, f.s))
	require.NoError(f.t, f.d.StreamSynchronize(f.s))
	return out
}

// A while node whose body's kernel clears the condition iterates until it does; with the
// default applied at each launch (1), it is a do-while: one run even when the counter is 0.
func TestConditionalWhileIteratesUntilTheKernelClearsIt(t *testing.T) {
	f := newCondFixture(t)
	g, err := f.d.GraphCreate()
	require.NoError(t, err)
	h, err := f.d.GraphConditionalHandleCreate(g, 1, backend.CondAssignDefault)
	require.NoError(t, err)
	_, bodies := f.add(g, nil, cond(h, backend.CondWhile, 1))
	require.Len(t, bodies, 1)
	f.add(bodies[0], nil, f.kernel("count", ptrArg(f.p), u64Arg(uint64(h))))
	x, err := f.d.GraphInstantiate(g, 0)
	require.NoError(t, err)

	f.set(5)
	assert.Equal(t, []int64{0, 5}, f.launch(x)[:2], "five iterations down to zero")
	f.set(7)
	assert.Equal(t, []int64{0, 7}, f.launch(x)[:2], "the default is applied again at the next launch")
	f.set(0)
	assert.Equal(t, []int64{-1, 1}, f.launch(x)[:2], "do-while: the body runs once before the kernel clears the condition")
}

// Without CondAssignDefault the value is set once, at instantiation, and kept between
// launches: a while node whose condition a launch cleared does not run in the next.
func TestConditionalWithoutDefaultKeepsTheValue(t *testing.T) {
	f := newCondFixture(t)
	g, err := f.d.GraphCreate()
	require.NoError(t, err)
	h, err := f.d.GraphConditionalHandleCreate(g, 1, 0)
	require.NoError(t, err)
	_, bodies := f.add(g, nil, cond(h, backend.CondWhile, 1))
	f.add(bodies[0], nil, f.kernel("count", ptrArg(f.p), u64Arg(uint64(h))))
	x, err := f.d.GraphInstantiate(g, 0)
	require.NoError(t, err)
	f.set(3)
	assert.Equal(t, []int64{0, 3}, f.launch(x)[:2])
	f.set(3)
	assert.Equal(t, []int64{3, 0}, f.launch(x)[:2], "the condition stayed cleared")
}

// if (size 1 and 2) and switch pick their body from the value a kernel upstream set.
func TestConditionalIfElseAndSwitchPickTheirBody(t *testing.T) {
	f := newCondFixture(t)
	g, err := f.d.GraphCreate()
	require.NoError(t, err)
	hIf, err := f.d.GraphConditionalHandleCreate(g, 0, 0)
	require.NoError(t, err)
	hSw, err := f.d.GraphConditionalHandleCreate(g, 0, 0)
	require.NoError(t, err)
	pickIf, _ := f.add(g, nil, f.kernel("pick", ptrArg(f.p), u64Arg(uint64(hIf))))
	pickSw, _ := f.add(g, nil, f.kernel("pick", ptrArg(f.p), u64Arg(uint64(hSw))))
	_, ifBodies := f.add(g, []backend.GraphNode{pickIf, pickSw}, cond(hIf, backend.CondIf, 2))
	f.add(ifBodies[0], nil, f.kernel("mark", ptrArg(f.p), u64Arg(1)))
	f.add(ifBodies[1], nil, f.kernel("mark", ptrArg(f.p), u64Arg(2)))
	ifDone, err := f.d.GraphNodes(g)
	require.NoError(t, err)
	_, swBodies := f.add(g, []backend.GraphNode{ifDone[len(ifDone)-1]}, cond(hSw, backend.CondSwitch, 3))
	require.Len(t, swBodies, 3)
	for i, b := range swBodies {
		f.add(b, nil, f.kernel("mark", ptrArg(f.p), u64Arg(uint64(3+i))))
	}
	x, err := f.d.GraphInstantiate(g, 0)
	require.NoError(t, err)
	for v := range int64(5) {
		f.set(v)
		want := []int64{v, 0, 0, 0, 0, 0, 0, 0}
		if v != 0 {
			want[1] = 1 // if: body 0
		} else {
			want[2] = 1 // else: body 1
		}
		if v < 3 {
			want[3+v] = 1 // switch: body v; none past the last
		}
		assert.Equal(t, want, f.launch(x), "selector %d", v)
	}
}

// A conditional inside a body uses a handle of the enclosing graph; a body filled by capture
// runs like one built node by node.
func TestConditionalNestedAndCapturedBodies(t *testing.T) {
	f := newCondFixture(t)
	g, err := f.d.GraphCreate()
	require.NoError(t, err)
	hw, err := f.d.GraphConditionalHandleCreate(g, 1, backend.CondAssignDefault)
	require.NoError(t, err)
	hi, err := f.d.GraphConditionalHandleCreate(g, 1, backend.CondAssignDefault)
	require.NoError(t, err)
	_, wb := f.add(g, nil, cond(hw, backend.CondWhile, 1))
	require.NoError(t, f.d.StreamBeginCaptureToGraph(f.s, wb[0], nil, backend.CaptureGlobal))
	require.NoError(t, f.d.Launch(f.ks["count"], backend.Dim3{X: 1, Y: 1, Z: 1}, backend.Dim3{X: 1, Y: 1, Z: 1}, 0, f.s,
		[]backend.Arg{ptrArg(f.p), u64Arg(uint64(hw))}))
	got, err := f.d.StreamEndCapture(f.s)
	require.NoError(t, err)
	assert.Equal(t, wb[0], got, "capturing into a graph ends with that graph")
	nodes, err := f.d.GraphNodes(wb[0])
	require.NoError(t, err)
	require.Len(t, nodes, 1)
	_, ib := f.add(wb[0], nodes, cond(hi, backend.CondIf, 1))
	f.add(ib[0], nil, f.kernel("mark", ptrArg(f.p), u64Arg(2)))
	x, err := f.d.GraphInstantiate(g, 0)
	require.NoError(t, err)
	f.set(4)
	assert.Equal(t, []int64{0, 4, 4}, f.launch(x)[:3], "the inner if ran in every iteration")
}

// Bad input gets an error naming what was wrong, and the graph stays usable.
func TestConditionalBadInput(t *testing.T) {
	f := newCondFixture(t)
	g, err := f.d.GraphCreate()
	require.NoError(t, err)
	other, err := f.d.GraphCreate()
	require.NoError(t, err)
	h, err := f.d.GraphConditionalHandleCreate(g, 0, 0)
	require.NoError(t, err)

	_, err = f.d.GraphConditionalHandleCreate(g, 0, 8)
	requireCode(t, err, cudaerr.InvalidValue)
	assert.Contains(t, err.Error(), "flags")

	_, _, err = f.d.GraphAddNode(other, nil, cond(h, backend.CondIf, 1))
	requireCode(t, err, cudaerr.InvalidValue)
	assert.Contains(t, err.Error(), "was not made on graph")

	for _, c := range []backend.NodeParams{cond(h, backend.CondWhile, 2), cond(h, backend.CondIf, 3), cond(h, backend.CondSwitch, 0), cond(h, 9, 1)} {
		_, _, err = f.d.GraphAddNode(g, nil, c)
		requireCode(t, err, cudaerr.InvalidValue, "%+v", c.Conditional)
	}

	n, bodies := f.add(g, nil, cond(h, backend.CondIf, 1))
	err = f.d.GraphNodeSetParams(n, f.kernel("mark", ptrArg(f.p), u64Arg(0)))
	requireCode(t, err, cudaerr.InvalidValue)
	assert.Contains(t, err.Error(), "is a conditional node, given kernel parameters")

	requireCode(t, f.d.GraphDestroy(bodies[0]), cudaerr.InvalidValue, "a body is destroyed with its node")
	_, err = f.d.GraphClone(g)
	requireCode(t, err, cudaerr.NotSupported)
	_, err = f.d.GraphAddChildNode(other, nil, g)
	requireCode(t, err, cudaerr.NotSupported)
	_, err = f.d.GraphInstantiate(bodies[0], 0)
	requireCode(t, err, cudaerr.InvalidValue)

	e, err := f.d.EventCreate(backend.EventDisableTiming)
	require.NoError(t, err)
	_, err = f.d.GraphAddEventRecordNode(bodies[0], nil, e)
	require.NoError(t, err)
	_, err = f.d.GraphInstantiate(g, 0)
	requireCode(t, err, cudaerr.InvalidValue)
	assert.Contains(t, err.Error(), "event-record node")

	// The device goes on: another graph builds, runs and is destroyed.
	require.NoError(t, f.d.GraphDestroy(g))
	f.add(other, nil, f.kernel("mark", ptrArg(f.p), u64Arg(0)))
	x, err := f.d.GraphInstantiate(other, 0)
	require.NoError(t, err)
	f.set()
	assert.Equal(t, int64(1), f.launch(x)[0])
	_, err = f.d.GraphNodes(bodies[0])
	requireCode(t, err, cudaerr.InvalidValue, "the bodies went with their graph")
}

// The generic calls change kernel and memset nodes in a graph and in an executable graph.
func TestGenericNodeParams(t *testing.T) {
	f := newCondFixture(t)
	g, err := f.d.GraphCreate()
	require.NoError(t, err)
	set, _ := f.add(g, nil, backend.NodeParams{Type: backend.NodeMemset, Memset: backend.MemsetNode{Dst: f.p, Value: 1, ElementSize: 1, Width: 64, Height: 1}})
	mark, _ := f.add(g, []backend.GraphNode{set}, f.kernel("mark", ptrArg(f.p), u64Arg(0)))
	empty, _ := f.add(g, []backend.GraphNode{mark}, backend.NodeParams{Type: backend.NodeEmpty})
	require.NoError(t, f.d.GraphNodeSetParams(set, backend.NodeParams{Type: backend.NodeMemset, Memset: backend.MemsetNode{Dst: f.p, Value: 0, ElementSize: 1, Width: 64, Height: 1}}))
	require.NoError(t, f.d.GraphNodeSetParams(empty, backend.NodeParams{Type: backend.NodeEmpty}))
	x, err := f.d.GraphInstantiate(g, 0)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 0}, f.launch(x)[:2])
	require.NoError(t, f.d.GraphExecNodeSetParams(x, mark, f.kernel("mark", ptrArg(f.p), u64Arg(1))))
	assert.Equal(t, []int64{0, 1}, f.launch(x)[:2], "the exec's kernel node marks element 1 now")
	require.NoError(t, f.d.GraphExecNodeSetParams(x, set, backend.NodeParams{Type: backend.NodeMemset, Memset: backend.MemsetNode{Dst: f.p, Value: 2, ElementSize: 1, Width: 64, Height: 1}}))
	assert.Equal(t, int64(0x0202020202020203), f.launch(x)[1])

	err = f.d.GraphExecNodeSetParams(x, set, f.kernel("mark", ptrArg(f.p), u64Arg(0)))
	requireCode(t, err, cudaerr.InvalidValue)
	_, _, err = f.d.GraphAddNode(g, nil, backend.NodeParams{Type: backend.NodeHost})
	requireCode(t, err, cudaerr.NotSupported)
	err = f.d.GraphNodeSetParams(0x1234, backend.NodeParams{Type: backend.NodeEmpty})
	requireCode(t, err, cudaerr.InvalidValue)
}

// Setting a conditional from a kernel outside a graph launch is a fault of the kernel.
func TestSimSetConditionalOutsideAGraphFaults(t *testing.T) {
	f := newCondFixture(t)
	launch(t, f.d, f.ks["pick"], f.s, ptrArg(f.p), u64Arg(1))
	err := f.d.StreamSynchronize(f.s)
	requireCode(t, err, cudaerr.LaunchFailure)
}

// The calls that change an executable graph's nodes reach nodes inside its bodies, and an
// update takes new body parameters when the conditional node is the same.
func TestConditionalBodiesInAnExecutableGraph(t *testing.T) {
	f := newCondFixture(t)
	build := func(slot uint64) (backend.Graph, backend.GraphNode) {
		g, err := f.d.GraphCreate()
		require.NoError(t, err)
		h, err := f.d.GraphConditionalHandleCreate(g, 1, backend.CondAssignDefault)
		require.NoError(t, err)
		_, bodies := f.add(g, nil, cond(h, backend.CondIf, 1))
		n, _ := f.add(bodies[0], nil, f.kernel("mark", ptrArg(f.p), u64Arg(slot)))
		return g, n
	}
	g, n := build(1)
	x, err := f.d.GraphInstantiate(g, 0)
	require.NoError(t, err)
	f.set()
	assert.Equal(t, []int64{0, 1, 0, 0}, f.launch(x)[:4])
	require.NoError(t, f.d.GraphExecNodeSetParams(x, n, f.kernel("mark", ptrArg(f.p), u64Arg(2))))
	f.set()
	assert.Equal(t, []int64{0, 0, 1, 0}, f.launch(x)[:4], "the body's kernel node changed in the exec")

	// The same graph with the body's kernel changed updates; a graph whose conditional node
	// has another handle does not.
	require.NoError(t, f.d.GraphNodeSetParams(n, f.kernel("mark", ptrArg(f.p), u64Arg(3))))
	info, err := f.d.GraphExecUpdate(x, g)
	require.NoError(t, err)
	assert.Equal(t, backend.UpdateSuccess, info.Result)
	f.set()
	assert.Equal(t, []int64{0, 0, 0, 1}, f.launch(x)[:4])
	other, _ := build(1)
	info, err = f.d.GraphExecUpdate(x, other)
	requireCode(t, err, cudaerr.GraphExecUpdateFailure)
	assert.Equal(t, backend.UpdateParametersChanged, info.Result)
	f.set()
	assert.Equal(t, []int64{0, 0, 0, 1}, f.launch(x)[:4], "a refused update leaves the exec as it was")
}

// The DOT file draws a conditional node with its bodies and their nodes.
func TestConditionalDot(t *testing.T) {
	f := newCondFixture(t)
	g, err := f.d.GraphCreate()
	require.NoError(t, err)
	h, err := f.d.GraphConditionalHandleCreate(g, 0, 0)
	require.NoError(t, err)
	_, bodies := f.add(g, nil, cond(h, backend.CondSwitch, 2))
	f.add(bodies[1], nil, f.kernel("mark", ptrArg(f.p), u64Arg(0)))
	path := t.TempDir() + "/g.dot"
	require.NoError(t, f.d.GraphDebugDot(g, path))
	dot, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(dot), `label="body 1"`)
	assert.Contains(t, string(dot), `n0_b1_0 [label="kernel: kernel \"mark\""]`, "the body's node, in its cluster")
	assert.Contains(t, string(dot), "shape=diamond")
}

// A graph with conditional nodes has one executable graph at a time.
func TestConditionalGraphInstantiatesOnce(t *testing.T) {
	f := newCondFixture(t)
	g, err := f.d.GraphCreate()
	require.NoError(t, err)
	h, err := f.d.GraphConditionalHandleCreate(g, 0, 0)
	require.NoError(t, err)
	f.add(g, nil, cond(h, backend.CondIf, 1))
	x, err := f.d.GraphInstantiate(g, 0)
	require.NoError(t, err)
	_, err = f.d.GraphInstantiate(g, 0)
	requireCode(t, err, cudaerr.InvalidValue)
	assert.Contains(t, err.Error(), "already instantiated")
	require.NoError(t, f.d.GraphExecDestroy(x))
	_, err = f.d.GraphInstantiate(g, 0)
	require.NoError(t, err, "once the first is destroyed")
}
