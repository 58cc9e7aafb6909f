package cudart

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
)

// DriverEntryPoint on a runtime without cudaGetDriverEntryPointByVersion (before 12.5), made
// here by marking the symbol missing in a runtime of its own: the older call finds the same
// function for the runtime's own version, and any other version is refused, naming why.
func TestDriverEntryPointWithoutByVersion(t *testing.T) {
	rt := gpuRuntime(t)
	lib, err := search(cudartSpec, newConfig(nil))
	require.NoError(t, err)
	old := newRuntime(lib, nil)
	old.syms.addrs[fnGetDriverEntryPointByVersion].Store(symMissing)
	require.False(t, old.syms.has(fnGetDriverEntryPointByVersion))

	for _, symbol := range []string{"cuDriverGetVersion", "cuMemAlloc", "cuMemcpyAsync"} {
		want, err := rt.DriverEntryPoint(symbol, 0, 0)
		require.NoError(t, err, symbol)
		got, err := old.DriverEntryPoint(symbol, 0, 0)
		require.NoError(t, err, symbol)
		assert.Equal(t, want, got, "%s through cudaGetDriverEntryPoint", symbol)
	}
	own, err := old.RuntimeVersion()
	require.NoError(t, err)
	_, err = old.DriverEntryPoint("cuMemAlloc", own-1000, 0)
	require.ErrorIs(t, err, cudaerr.NotSupported)
	assert.ErrorContains(t, err, "cudaGetDriverEntryPointByVersion")
	_, err = old.DriverEntryPoint("cuNoSuchFunction", 0, 0)
	require.ErrorIs(t, err, cudaerr.SymbolNotFound)
	assert.ErrorContains(t, err, "cudaGetDriverEntryPoint")
}
