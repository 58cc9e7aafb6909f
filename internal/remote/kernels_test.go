//go:build linux

package remote_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// A module's simulator kernels cross by name: the worker runs its own function of that name
// (testKernels), whatever function the parent's map holds.
func TestSimKernelsRunByName(t *testing.T) {
	_, dv := open(t)
	mod, err := dv.LoadModule(backend.ModuleSpec{SimKernels: map[string]backend.SimKernel{"fill": nil}})
	require.NoError(t, err)
	k, err := dv.ModuleKernel(mod, "fill")
	require.NoError(t, err)

	const n = 1000
	p, err := dv.Malloc(4 * n)
	require.NoError(t, err)
	hp, err := dv.HostAlloc(4*n, 0)
	require.NoError(t, err)
	s, err := dv.StreamCreate(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	args := []backend.Arg{{Kind: backend.ArgPtr, Bits: uint64(p)}, {Kind: backend.ArgInt32, Bits: n}, {Kind: backend.ArgInt32, Bits: 42}}
	require.NoError(t, dv.Launch(k, backend.Dim3{X: 4, Y: 1, Z: 1}, backend.Dim3{X: 256, Y: 1, Z: 1}, 0, s, args))
	require.NoError(t, dv.CopyDtoH(hp, p, 4*n, s))
	require.NoError(t, dv.StreamSynchronize(s))
	for i, v := range unsafe.Slice((*int32)(hp), n) {
		require.Equal(t, int32(42), v, "element %d", i)
	}

	require.NoError(t, dv.StreamDestroy(s))
	require.NoError(t, dv.HostFree(hp))
	require.NoError(t, dv.Free(p))
	require.NoError(t, dv.UnloadModule(mod))
}

// A name the worker has no function for is refused when the module loads, saying which; the
// device goes on.
func TestUnregisteredSimKernelIsRefused(t *testing.T) {
	_, dv := open(t)
	_, err := dv.LoadModule(backend.ModuleSpec{SimKernels: map[string]backend.SimKernel{"fill": nil, "nope": nil}})
	require.ErrorIs(t, err, cudaerr.SymbolNotFound)
	assert.Contains(t, err.Error(), `"nope" not registered in the worker`)
	assert.NotContains(t, err.Error(), `"fill"`)
	_, _, err = dv.MemInfo()
	require.NoError(t, err)
}

// A module's simulator variables cross with it, bytes and all: the worker's kernel reads and
// writes them, and the parent finds them by name.
func TestSimGlobalsCross(t *testing.T) {
	_, dv := open(t)
	mod, err := dv.LoadModule(backend.ModuleSpec{SimKernels: map[string]backend.SimKernel{"bump": nil},
		SimGlobals: map[string][]byte{"counter": {5, 0, 0, 0}, "step": {3, 0, 0, 0}}})
	require.NoError(t, err)
	k, err := dv.ModuleKernel(mod, "bump")
	require.NoError(t, err)
	p, size, err := dv.ModuleGlobal(mod, "counter")
	require.NoError(t, err)
	require.Equal(t, uint64(4), size)
	hp, err := dv.HostAlloc(4, 0)
	require.NoError(t, err)
	s, err := dv.StreamCreate(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	one := backend.Dim3{X: 1, Y: 1, Z: 1}
	require.NoError(t, dv.Launch(k, one, one, 0, s, nil))
	require.NoError(t, dv.Launch(k, one, one, 0, s, nil))
	require.NoError(t, dv.CopyDtoH(hp, p, 4, s))
	require.NoError(t, dv.StreamSynchronize(s))
	assert.Equal(t, int32(11), *(*int32)(hp), "5 + 3 + 3")

	_, _, err = dv.ModuleGlobal(mod, "nope")
	require.ErrorIs(t, err, cudaerr.SymbolNotFound)
	assert.Contains(t, err.Error(), `"nope"`)

	require.NoError(t, dv.StreamDestroy(s))
	require.NoError(t, dv.HostFree(hp))
	require.NoError(t, dv.UnloadModule(mod))
}
