package graphs_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/testdev"
)

// constantSource has a __constant__ table a kernel reads: what cudaGraphAddMemcpyNodeToSymbol
// writes in the runtime API, written here by copy nodes into the variable's buffer.
var constantSource = device.Source{
	Name: "graph_constant.cu",
	Code: `__constant__ unsigned int table[16];

extern "C" __global__ void lookup(unsigned int* out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = table[i] * 2u + 1u;
}
`,
	Sim: map[string]cuda.SimKernel{"lookup": func(c *cuda.KernelCall) error {
		table := cuda.SimGlobal[uint32](c, "table")
		out := cuda.SimSlice[uint32](c, 0, int(c.Int32(1)))
		for i := range out {
			out[i] = table[i]*2 + 1
		}
		return nil
	}},
	SimGlobals: map[string][]byte{"table": make([]byte, 16*4)},
}

// Copy nodes into a module's __constant__ variable (Module.Global) stand in for the runtime's
// to-symbol copy nodes: the kernel of the graph reads what they wrote, and changing the node
// on the graph or on the Exec changes what later launches read.
func TestCopyNodesIntoAConstantGlobal(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		mod, err := f.Dev.Compile(f.Ctx, constantSource)
		require.NoError(t, err)
		lookup, err := mod.Kernel(f.Ctx, "lookup")
		require.NoError(t, err)
		table, err := mod.Global(f.Ctx, "table")
		require.NoError(t, err)
		const m = 16
		values := func(base uint32) []uint32 {
			v := make([]uint32, m)
			for i := range v {
				v[i] = base + uint32(i)
			}
			return v
		}
		want := func(base uint32) []uint32 {
			v := values(base)
			for i := range v {
				v[i] = v[i]*2 + 1
			}
			return v
		}
		a, b, c := f.buffer(t, m), f.buffer(t, m), f.buffer(t, m)
		testdev.Write(t, f.Ctx, a, values(10))
		testdev.Write(t, f.Ctx, b, values(100))
		testdev.Write(t, f.Ctx, c, values(1000))
		out := f.buffer(t, m)

		g := f.graph(t)
		toSymbol, err := g.AddCopy(f.Ctx, nil, table, a)
		require.NoError(t, err)
		k, err := g.AddKernel(f.Ctx, graphs.After(toSymbol), lookup, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(32)}, out, int32(m))
		require.NoError(t, err)
		_, down, err := graphs.AddDownload[uint32](f.Ctx, g, graphs.After(k), table)
		require.NoError(t, err)
		p, err := toSymbol.CopyParams(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, uint64(4*m), p.Bytes, "the whole variable")

		s := f.Stream(t)
		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		f.launch(t, x, s)
		assert.Equal(t, want(10), f.read(t, out), "the kernel read the table the graph wrote")
		assert.Equal(t, values(10), down.Host(), "the graph read the table back")

		require.NoError(t, x.SetCopy(f.Ctx, toSymbol, table, b))
		f.launch(t, x, s)
		assert.Equal(t, want(100), f.read(t, out), "Exec.SetCopy changed the source")

		require.NoError(t, toSymbol.SetCopy(f.Ctx, table, c))
		x2, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		f.launch(t, x2, s)
		assert.Equal(t, want(1000), f.read(t, out), "Node.SetCopy changed the source")
		assert.Equal(t, values(1000), down.Host())

		// A copy past the variable's end is refused naming sizes; the graph stays usable.
		big := f.buffer(t, m+1)
		_, err = g.AddCopy(f.Ctx, nil, table, big)
		require.ErrorIs(t, err, device.ErrOutOfRange)
		f.launch(t, x2, s)
		require.NoError(t, x.Close(f.Ctx))
		require.NoError(t, x2.Close(f.Ctx))
	})
}
