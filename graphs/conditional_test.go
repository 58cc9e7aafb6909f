package graphs_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testfix"
	"github.com/gpuactor/gpuactor/streams"
)

// condSource's kernels set conditions from the GPU.
const condSource = graphs.ConditionalDecls + `

// countdown: p[0] -= 1, p[1] += 1 (the iterations), and h stays set while p[0] > 0.
extern "C" __global__ void countdown(int *p, cudaGraphConditionalHandle h) {
    p[0] -= 1;
    p[1] += 1;
    cudaGraphSetConditional(h, p[0] > 0 ? 1u : 0u);
}
// pick: h = p[0].
extern "C" __global__ void pick(const int *p, cudaGraphConditionalHandle h) {
    cudaGraphSetConditional(h, (unsigned int)p[0]);
}
// mark: p[i] += 1.
extern "C" __global__ void mark(int *p, int i) { p[i] += 1; }
`

var condSim = map[string]cuda.SimKernel{
	"countdown": func(c *cuda.KernelCall) error {
		p := cuda.SimSlice[int32](c, 0, 2)
		p[0]--
		p[1]++
		v := uint32(0)
		if p[0] > 0 {
			v = 1
		}
		cuda.SimSetConditional(c, c.Handle(1), v)
		return nil
	},
	"pick": func(c *cuda.KernelCall) error {
		cuda.SimSetConditional(c, c.Handle(1), uint32(cuda.SimSlice[int32](c, 0, 1)[0]))
		return nil
	},
	"mark": func(c *cuda.KernelCall) error {
		cuda.SimSlice[int32](c, 0, 8)[c.Int32(1)]++
		return nil
	},
}

var condSrc = device.Source{Name: "conditional_test.cu", Code: condSource, Sim: condSim}

type condFix struct {
	*testfix.Fixture
	s                     *streams.Stream
	buf                   *device.Buffer
	countdown, pick, mark *device.Kernel
}

func eachCond(t *testing.T, fn func(t *testing.T, f *condFix)) {
	testfix.EachBackend(t, condSrc, func(t *testing.T, tf *testfix.Fixture) {
		s, err := streams.New(tf.Ctx, tf.Dev)
		require.NoError(t, err)
		f := &condFix{Fixture: tf, s: s}
		f.countdown, f.pick, f.mark = f.Kernel(t, "countdown"), f.Kernel(t, "pick"), f.Kernel(t, "mark")
		f.buf, err = f.Dev.MallocBytes(f.Ctx, 32)
		require.NoError(t, err)
		fn(t, f)
	})
}

func (f *condFix) run(t *testing.T, x *graphs.Exec, start ...int32) []int32 {
	t.Helper()
	in := make([]int32, 8)
	copy(in, start)
	testdev.Write(t, f.Ctx, f.buf, in)
	_, err := x.Launch(f.Ctx, f.s).Await(f.Ctx)
	require.NoError(t, err)
	out := make([]int32, 8)
	testdev.Read(t, f.Ctx, out, f.buf)
	return out
}

var one = cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}

// A while loop whose body's kernel clears the condition runs until it does, and again from
// the default at the next launch.
func TestWhileLoopCountsDown(t *testing.T) {
	eachCond(t, func(t *testing.T, f *condFix) {
		g, err := graphs.New(f.Ctx, f.Dev)
		require.NoError(t, err)
		cond, err := g.NewCondition(f.Ctx, graphs.Default(1))
		require.NoError(t, err)
		loop, body, err := g.AddWhile(f.Ctx, nil, cond)
		require.NoError(t, err)
		assert.Equal(t, graphs.ConditionalNode, loop.Kind())
		owner, ok := body.Body()
		require.True(t, ok)
		assert.Same(t, loop, owner)
		_, err = body.AddKernel(f.Ctx, nil, f.countdown, one, f.buf, cond.Handle())
		require.NoError(t, err)
		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, []int32{0, 10}, f.run(t, x, 10)[:2])
		assert.Equal(t, []int32{0, 3}, f.run(t, x, 3)[:2], "the default is applied at every launch")

		d, err := g.Describe(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, d.Count(graphs.ConditionalNode))
		assert.ErrorIs(t, body.Close(f.Ctx), device.ErrInvalidArgument, "a body goes with its graph")
		require.NoError(t, g.Close(f.Ctx))
		_, err = body.AddEmpty(f.Ctx, nil)
		assert.ErrorIs(t, err, device.ErrClosed, "the body closed with its graph")
	})
}

// if/else and switch run the body the value picks; nothing for a switch value past the end.
func TestIfElseAndSwitch(t *testing.T) {
	eachCond(t, func(t *testing.T, f *condFix) {
		g, err := graphs.New(f.Ctx, f.Dev)
		require.NoError(t, err)
		ci, err := g.NewCondition(f.Ctx)
		require.NoError(t, err)
		cs, err := g.NewCondition(f.Ctx)
		require.NoError(t, err)
		p1, err := g.AddKernel(f.Ctx, nil, f.pick, one, f.buf, ci.Handle())
		require.NoError(t, err)
		p2, err := g.AddKernel(f.Ctx, nil, f.pick, one, f.buf, cs.Handle())
		require.NoError(t, err)
		ifn, then, els, err := g.AddIfElse(f.Ctx, graphs.After(p1, p2), ci)
		require.NoError(t, err)
		_, err = then.AddKernel(f.Ctx, nil, f.mark, one, f.buf, int32(1))
		require.NoError(t, err)
		_, err = els.AddKernel(f.Ctx, nil, f.mark, one, f.buf, int32(2))
		require.NoError(t, err)
		_, bodies, err := g.AddSwitch(f.Ctx, graphs.After(ifn), cs, 3)
		require.NoError(t, err)
		require.Len(t, bodies, 3)
		for i, b := range bodies {
			_, err = b.AddKernel(f.Ctx, nil, f.mark, one, f.buf, int32(3+i))
			require.NoError(t, err)
		}
		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		for v := range int32(5) {
			want := []int32{v, 0, 0, 0, 0, 0, 0, 0}
			if v != 0 {
				want[1] = 1
			} else {
				want[2] = 1
			}
			if v < 3 {
				want[3+v] = 1
			}
			assert.Equal(t, want, f.run(t, x, v), "value %d", v)
		}
	})
}

// The sample's capturedWhileGraph: a while node added inside a stream capture, its body filled
// by capturing into it.
func TestWhileInsideACaptureWithACapturedBody(t *testing.T) {
	eachCond(t, func(t *testing.T, f *condFix) {
		cp, err := graphs.BeginCapture(f.Ctx, f.s, graphs.WithMode(graphs.Global))
		require.NoError(t, err)
		cond, err := cp.NewCondition(f.Ctx)
		require.NoError(t, err)
		f.s.Launch(f.Ctx, f.countdown, one, f.buf, cond.Handle())
		_, body, err := cp.AddWhile(f.Ctx, cond)
		require.NoError(t, err)
		f.s.Launch(f.Ctx, f.mark, one, f.buf, int32(2))
		g, err := cp.End(f.Ctx)
		require.NoError(t, err)
		assert.Same(t, cond.Graph(), g, "the condition's graph is the captured graph")

		require.NoError(t, graphs.CaptureInto(f.Ctx, f.s, body, nil, func(ctx context.Context) error {
			f.s.Launch(ctx, f.countdown, one, f.buf, cond.Handle())
			return nil
		}))
		d, err := g.Describe(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, d.Count(graphs.ConditionalNode))
		assert.Equal(t, 2, d.Count(graphs.KernelNode))

		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, []int32{0, 1, 1}, f.run(t, x, 1)[:3], "while, not do-while: the kernel before the loop cleared it")
		assert.Equal(t, []int32{0, 5, 1}, f.run(t, x, 5)[:3])
	})
}

// Bad input: a condition of another graph, a switch of no bodies, a body's Close.
func TestConditionBadInput(t *testing.T) {
	eachCond(t, func(t *testing.T, f *condFix) {
		g, err := graphs.New(f.Ctx, f.Dev)
		require.NoError(t, err)
		other, err := graphs.New(f.Ctx, f.Dev)
		require.NoError(t, err)
		cond, err := g.NewCondition(f.Ctx)
		require.NoError(t, err)
		_, _, err = other.AddIf(f.Ctx, nil, cond)
		require.ErrorIs(t, err, graphs.ErrForeignCondition)
		_, _, err = g.AddSwitch(f.Ctx, nil, cond, 0)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, _, err = g.AddWhile(f.Ctx, nil, nil)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, err = graphs.BeginCaptureInto(f.Ctx, f.s, nil, nil)
		require.ErrorIs(t, err, device.ErrInvalidArgument)

		// A nested conditional may use a condition of the outer graph; a sibling graph may not.
		// A condition drives one conditional node only.
		_, body, err := g.AddIf(f.Ctx, nil, cond)
		require.NoError(t, err)
		_, _, err = body.AddWhile(f.Ctx, nil, cond)
		require.ErrorIs(t, err, device.ErrInvalidArgument, "a condition already driving a node")
		assert.Contains(t, err.Error(), "already drives")
		outer, err := g.NewCondition(f.Ctx)
		require.NoError(t, err)
		_, _, err = body.AddWhile(f.Ctx, nil, outer)
		require.NoError(t, err)
		inner, err := body.NewCondition(f.Ctx)
		require.NoError(t, err)
		_, _, err = g.AddIf(f.Ctx, nil, inner)
		require.ErrorIs(t, err, graphs.ErrForeignCondition, "a body's condition is not the outer graph's")

		// The graph is still usable.
		_, err = g.AddEmpty(f.Ctx, nil)
		require.NoError(t, err)
	})
}

// What CUDA forbids of a graph with conditional nodes (a clone, a child) is refused, and a
// condition of a capture that was aborted goes with its graph.
func TestConditionalGraphRestrictions(t *testing.T) {
	eachCond(t, func(t *testing.T, f *condFix) {
		g, err := graphs.New(f.Ctx, f.Dev)
		require.NoError(t, err)
		cond, err := g.NewCondition(f.Ctx)
		require.NoError(t, err)
		_, _, err = g.AddIf(f.Ctx, nil, cond)
		require.NoError(t, err)
		_, err = g.Clone(f.Ctx)
		require.Error(t, err, "a graph with conditional nodes cannot be cloned")
		parent, err := graphs.New(f.Ctx, f.Dev)
		require.NoError(t, err)
		_, err = parent.AddChild(f.Ctx, nil, g)
		require.Error(t, err, "nor be a child graph")

		cp, err := graphs.BeginCapture(f.Ctx, f.s)
		require.NoError(t, err)
		c2, err := cp.NewCondition(f.Ctx)
		require.NoError(t, err)
		_, body, err := cp.AddWhile(f.Ctx, c2)
		require.NoError(t, err)
		require.NoError(t, cp.Abort(f.Ctx))
		_, err = c2.Graph().AddEmpty(f.Ctx, nil)
		require.ErrorIs(t, err, device.ErrClosed, "the aborted capture's graph is gone")
		_, err = body.AddEmpty(f.Ctx, nil)
		require.ErrorIs(t, err, device.ErrClosed, "and its bodies with it")

		// The device goes on.
		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, int32(0), f.run(t, x, 0)[1])
	})
}
