package cudart

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMissingSymbol(t *testing.T) {
	rt := mustLoad(t)
	_, err := rt.lookup("cudaGpuactorNoSuchFunction")
	require.Error(t, err)
	var se *SymbolError
	require.ErrorAs(t, err, &se)
	assert.ErrorIs(t, err, ErrSymbolNotFound)
	assert.Equal(t, "cudaGpuactorNoSuchFunction", se.Symbol)
	assert.Equal(t, rt.Path(), se.Library)
	assert.Positive(t, se.Version)
	assert.Contains(t, err.Error(), "cudaGpuactorNoSuchFunction")
	assert.Contains(t, err.Error(), FormatVersion(se.Version))

	p, err := rt.lookup("cudaGetErrorName")
	require.NoError(t, err)
	assert.NotZero(t, p)
}

// A call newer than the loaded runtime is an error naming it, not a panic.
func TestNewerCallOnOlderRuntime(t *testing.T) {
	rt := mustLoad(t)
	if rt.syms.has(fnLibraryLoadData) {
		t.Skip("this runtime has the library API (12.8+)")
	}
	assert.Equal(t, DriverAPI, rt.ModuleAPI())
	_, err := rt.LoadModuleWith(LibraryAPI, []byte(".version 7.8\n"), 0)
	var se *SymbolError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "cudaLibraryLoadData", se.Symbol)
	assert.Contains(t, err.Error(), "cudaLibraryLoadData not found")
}

func TestSymtabCachesHitsAndMisses(t *testing.T) {
	var calls atomic.Int32
	tab := newSymtab([]string{"present", "absent", "flaky"}, func(name string) (uintptr, error) {
		calls.Add(1)
		switch name {
		case "present":
			return 0x1000, nil
		case "absent":
			return 0, &SymbolError{Symbol: name, Library: "libtest"}
		}
		return 0, errors.New("driver not ready")
	})
	for range 3 {
		p, err := tab.get(0)
		require.NoError(t, err)
		assert.Equal(t, uintptr(0x1000), p)
	}
	assert.Equal(t, int32(1), calls.Load(), "a found symbol is resolved once")

	for range 2 {
		_, err := tab.get(1)
		assert.ErrorIs(t, err, ErrSymbolNotFound)
	}
	assert.Equal(t, symMissing, tab.addrs[1].Load(), "a missing symbol is remembered")

	_, err := tab.get(2)
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrSymbolNotFound)
	assert.Zero(t, tab.addrs[2].Load(), "other failures are retried")
	assert.True(t, tab.has(0))
	assert.False(t, tab.has(1))
}
