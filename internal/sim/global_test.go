package sim

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// scaleByTable writes out[i] = table[i] * 2 for the 4 float64s of the global "table", and
// adds 1 to the int32 global "counter".
func scaleByTable(c *backend.KernelCall) error {
	table := cuda.SimGlobal[float64](c, "table")
	out := cuda.SimSlice[float64](c, 0, len(table))
	for i, v := range table {
		out[i] = 2 * v
	}
	cuda.SimGlobal[int32](c, "counter")[0]++
	return nil
}

func float64Bytes(xs ...float64) []byte {
	b := make([]byte, 8*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

func TestModuleGlobals(t *testing.T) {
	_, d0, d1 := open(t)
	init := float64Bytes(1, 2, 3, 4)
	spec := backend.ModuleSpec{
		SimKernels: map[string]backend.SimKernel{"scale": scaleByTable},
		SimGlobals: map[string][]byte{"table": init, "counter": make([]byte, 4)},
	}
	m, err := d0.LoadModule(spec)
	require.NoError(t, err)
	init[0] = 99 // the initial bytes are copied at load

	p, n, err := d0.ModuleGlobal(m, "table")
	require.NoError(t, err)
	assert.Equal(t, uint64(32), n)
	s := mkStream(t, d0)
	assert.Equal(t, []float64{1, 2, 3, 4}, readFloats(t, d0, p, 4, s), "a global starts with its initial bytes")

	// A copy to the global is what the kernel reads.
	require.NoError(t, d0.CopyHtoD(p, hostPtr([]float64{10, 20, 30, 40}), 32, s))
	k, err := d0.ModuleKernel(m, "scale")
	require.NoError(t, err)
	out := malloc(t, d0, 32)
	launch(t, d0, k, s, ptrArg(out))
	launch(t, d0, k, s, ptrArg(out))
	assert.Equal(t, []float64{20, 40, 60, 80}, readFloats(t, d0, out, 4, s))
	cp, cn, err := d0.ModuleGlobal(m, "counter")
	require.NoError(t, err)
	require.Equal(t, uint64(4), cn)
	count := []int32{0}
	require.NoError(t, d0.CopyDtoH(hostPtr(count), cp, 4, s))
	assert.Equal(t, int32(2), count[0], "each launch incremented the counter")

	// Bad names, and other devices' modules.
	_, _, err = d0.ModuleGlobal(m, "tabel")
	requireCode(t, err, cudaerr.SymbolNotFound)
	assert.Contains(t, err.Error(), `global "tabel"`)
	assert.Contains(t, err.Error(), `"counter", "table"`, "the message lists the declared globals")
	_, _, err = d1.ModuleGlobal(m, "table")
	requireCode(t, err, cudaerr.InvalidResourceHandle)

	// Unloading frees the globals: the address is no longer memory of the device.
	require.NoError(t, d0.StreamSynchronize(s))
	require.NoError(t, d0.UnloadModule(m))
	_, _, err = d0.ModuleGlobal(m, "table")
	requireCode(t, err, cudaerr.InvalidResourceHandle)
	require.Error(t, d0.CopyDtoH(hostPtr(make([]float64, 4)), p, 32, s), "the global's memory went with the module")
	assert.NoError(t, d0.Synchronize(), "the device stays usable")
}

func TestModuleGlobalsBadSpec(t *testing.T) {
	_, d0, _ := open(t)
	_, err := d0.LoadModule(backend.ModuleSpec{SimGlobals: map[string][]byte{"empty": nil, "ok": {1}}})
	requireCode(t, err, cudaerr.InvalidValue)
	assert.Contains(t, err.Error(), `global "empty"`)

	// A kernel reading a global its module lacks faults, naming it.
	m, err := d0.LoadModule(backend.ModuleSpec{SimKernels: map[string]backend.SimKernel{"scale": scaleByTable},
		SimGlobals: map[string][]byte{"table": float64Bytes(1)}})
	require.NoError(t, err)
	k, err := d0.ModuleKernel(m, "scale")
	require.NoError(t, err)
	s := mkStream(t, d0)
	launch(t, d0, k, s, ptrArg(malloc(t, d0, 8)))
	err = d0.StreamSynchronize(s)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `global "counter"`)
}
