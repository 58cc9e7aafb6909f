package graphs_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testfix"
	"github.com/gpuactor/gpuactor/streams"
)

// kernels of the graph tests, with their Go twins for the simulator.
const testSource = testdev.AddU32 + `
extern "C" __global__ void acc_u32(unsigned int* out, const unsigned int* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] += in[i];
}
extern "C" __global__ void mul_u32(unsigned int* p, unsigned int v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] *= v;
}
`

var testSim = map[string]cuda.SimKernel{
	"add_u32": testdev.AddU32Sim,
	"acc_u32": func(c *cuda.KernelCall) error {
		n := int(c.Int32(2))
		out, in := cuda.SimSlice[uint32](c, 0, n), cuda.SimSlice[uint32](c, 1, n)
		for i := range out {
			out[i] += in[i]
		}
		return nil
	},
	"mul_u32": func(c *cuda.KernelCall) error {
		n := int(c.Int32(2))
		p := cuda.SimSlice[uint32](c, 0, n)
		v := c.Uint32(1)
		for i := range p {
			p[i] *= v
		}
		return nil
	},
}

// fixture is the shared one with this package's kernels.
type fixture struct {
	*testfix.Fixture
	add *device.Kernel
	mul *device.Kernel
	acc *device.Kernel
}

// eachBackend runs fn on every backend (see testfix.EachBackend).
func eachBackend(t *testing.T, fn func(t *testing.T, f *fixture)) {
	testfix.EachBackend(t, testSrc, func(t *testing.T, tf *testfix.Fixture) {
		f := &fixture{Fixture: tf}
		f.add, f.mul, f.acc = f.kernels(t, f.Dev)
		fn(t, f)
	})
}

var testSrc = device.Source{Name: "graphs_test.cu", Code: testSource, Sim: testSim}

// kernels returns this package's kernels compiled on dev, f.Dev or another device.
func (f *fixture) kernels(t *testing.T, dev *device.Device) (add, mul, acc *device.Kernel) {
	t.Helper()
	return f.KernelOn(t, dev, "add_u32"), f.KernelOn(t, dev, "mul_u32"), f.KernelOn(t, dev, "acc_u32")
}

func (f *fixture) buffer(t *testing.T, n int) *device.Buffer {
	t.Helper()
	b, err := f.Dev.MallocBytes(f.Ctx, uint64(4*n))
	require.NoError(t, err)
	return b
}

func (f *fixture) graph(t *testing.T) *graphs.Graph {
	t.Helper()
	g, err := graphs.New(f.Ctx, f.Dev)
	require.NoError(t, err)
	return g
}

func (f *fixture) read(t *testing.T, b *device.Buffer) []uint32 {
	t.Helper()
	out := make([]uint32, b.Size()/4)
	testdev.Read(t, f.Ctx, out, b)
	return out
}

func (f *fixture) launch(t *testing.T, x *graphs.Exec, s *streams.Stream) {
	t.Helper()
	_, err := x.Launch(f.Ctx, s).Await(f.Ctx)
	require.NoError(t, err)
}

// leaky instantiates a graph that allocates an n-element buffer it never frees, then adds 1
// to every element of target (the allocation itself when target is nil): a second launch is
// refused until another graph frees the allocation (see freeing).
func (f *fixture) leaky(t *testing.T, target any) (*graphs.Graph, *graphs.Exec, cuda.DevicePtr) {
	t.Helper()
	g := f.graph(t)
	alloc, p, err := g.AddAlloc(f.Ctx, nil, 4*n)
	require.NoError(t, err)
	if target == nil {
		target = p
	}
	_, err = g.AddKernel(f.Ctx, graphs.After(alloc), f.add, cfg(n), target, uint32(1), int32(n))
	require.NoError(t, err)
	x, err := g.Instantiate(f.Ctx)
	require.NoError(t, err)
	return g, x, p
}

// freeing instantiates a graph of one node that frees p, an allocation of another graph's.
func (f *fixture) freeing(t *testing.T, p cuda.DevicePtr) *graphs.Exec {
	t.Helper()
	g := f.graph(t)
	_, err := g.AddFree(f.Ctx, nil, p)
	require.NoError(t, err)
	x, err := g.Instantiate(f.Ctx)
	require.NoError(t, err)
	return x
}

// cfg covers n elements with 256-thread blocks.
func cfg(n int) cuda.LaunchConfig {
	return cuda.LaunchConfig{Grid: cuda.Dim(uint32((n + 255) / 256)), Block: cuda.Dim(256)}
}
