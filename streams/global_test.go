package streams_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// globalsSource has a __constant__ table a kernel reads and a __device__ counter it bumps.
var globalsSource = device.Source{
	Name: "globals.cu",
	Code: `__constant__ float table[16];
__device__ int counter;

extern "C" __global__ void lookup(float* out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = table[i] * 2.0f + 1.0f;
	if (i == 0) atomicAdd(&counter, 1);
}
`,
	Sim: map[string]cuda.SimKernel{"lookup": func(c *cuda.KernelCall) error {
		table := cuda.SimGlobal[float32](c, "table")
		out := cuda.SimSlice[float32](c, 0, int(c.Int32(1)))
		for i := range out {
			out[i] = table[i]*2 + 1
		}
		cuda.SimGlobal[int32](c, "counter")[0]++
		return nil
	}},
	SimGlobals: map[string][]byte{"table": make([]byte, 16*4), "counter": make([]byte, 4)},
}

func TestModuleGlobals(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := testdev.Open(t, ctx, opts)
		mod, err := dev.Compile(ctx, globalsSource)
		require.NoError(t, err)
		k, err := mod.Kernel(ctx, "lookup")
		require.NoError(t, err)
		s, err := streams.New(ctx, dev)
		require.NoError(t, err)

		table, err := mod.Global(ctx, "table")
		require.NoError(t, err)
		assert.Equal(t, uint64(64), table.Size(), "float table[16]")
		again, err := mod.Global(ctx, "table")
		require.NoError(t, err)
		assert.Same(t, table, again, "one variable, one buffer")
		counter, err := mod.Global(ctx, "counter")
		require.NoError(t, err)
		assert.Equal(t, uint64(4), counter.Size(), "int counter")

		values := make([]float32, 16)
		for i := range values {
			values[i] = float32(i) * 1.5
		}
		out, err := dev.MallocBytes(ctx, 64)
		require.NoError(t, err)
		got := make([]float32, 16)
		count := []int32{-1}
		cfg := cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(32)}
		require.NoError(t, actor.WaitAll(ctx,
			streams.CopyToDevice(ctx, s, table, values),
			streams.CopyToDevice(ctx, s, counter, []int32{40}),
			s.Launch(ctx, k, cfg, out, int32(16)),
			s.Launch(ctx, k, cfg, out, int32(16)),
			streams.CopyFromDevice(ctx, s, got, out),
			streams.CopyFromDevice(ctx, s, count, counter)))
		for i, v := range values {
			assert.Equal(t, v*2+1, got[i], "element %d: the kernel read the table written from Go", i)
		}
		assert.Equal(t, int32(42), count[0], "two launches each added 1 to the counter written from Go")

		// Bad input: a copy past the variable's end, a name the module lacks.
		err = streams.CopyToDevice(ctx, s, table, make([]float32, 17)).Wait(ctx)
		require.Error(t, err, "17 floats do not fit float table[16]")
		assert.ErrorIs(t, err, device.ErrOutOfRange)
		_, err = mod.Global(ctx, "tabel")
		require.ErrorIs(t, err, device.ErrNoGlobal)
		assert.Contains(t, err.Error(), `"tabel"`)
		_, err = mod.Global(ctx, "")
		assert.ErrorIs(t, err, device.ErrInvalidArgument)

		// Closing the variable's buffer frees nothing: a new lookup finds the same memory.
		p, err := counter.DevicePtr(ctx)
		require.NoError(t, err)
		require.NoError(t, counter.Close(ctx))
		counter2, err := mod.Global(ctx, "counter")
		require.NoError(t, err)
		p2, err := counter2.DevicePtr(ctx)
		require.NoError(t, err)
		assert.Equal(t, p, p2)
		require.NoError(t, streams.CopyFromDevice(ctx, s, count, counter2).Wait(ctx))
		assert.Equal(t, int32(42), count[0], "the variable kept its value")

		// The module's close closes its variables; the device stays usable.
		require.NoError(t, mod.Close(ctx))
		err = streams.CopyToDevice(ctx, s, table, values).Wait(ctx)
		assert.ErrorIs(t, err, device.ErrClosed)
		_, err = mod.Global(ctx, "table")
		assert.ErrorIs(t, err, device.ErrClosed)
		require.NoError(t, streams.CopyToDevice(ctx, s, out, values).Wait(ctx))
		require.NoError(t, out.Close(ctx))
	})
}
