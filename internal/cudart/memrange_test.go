package cudart

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// The two forms the runtime reports locations in read back as the same backend.Location.
func TestRangeLocations(t *testing.T) {
	dev2 := backend.Location{Type: backend.LocationDevice, ID: 2}
	host := backend.Location{Type: backend.LocationHost}
	assert.Equal(t, dev2, typedLocation(1, 2))
	assert.Equal(t, host, typedLocation(2, 77), "a host location's id is ignored")
	assert.Equal(t, backend.Location{Type: backend.LocationHostNUMA, ID: 1}, typedLocation(3, 1))
	assert.Equal(t, backend.Location{}, typedLocation(0, 5), "invalid: none")
	assert.Equal(t, backend.Location{}, typedLocation(42, 5), "an unknown type: none")
	assert.Equal(t, dev2, legacyLocation(2))
	assert.Equal(t, host, legacyLocation(backend.CPUDevice))
	assert.Equal(t, backend.Location{}, legacyLocation(-2), "cudaInvalidDeviceId: none")
}

// A runtime before 13.0 takes an int device, which cannot name a host NUMA node: refused
// before the runtime is asked.
func TestHostNUMARefusedBefore13(t *testing.T) {
	r := &Runtime{major: 12}
	for _, loc := range []backend.Location{{Type: backend.LocationHostNUMA, ID: 1}, {Type: backend.LocationHostNUMACurrent}} {
		err := r.MemPrefetchAsync(0x1000, 16, loc, 0)
		require.ErrorIs(t, err, cudaerr.NotSupported)
		assert.Contains(t, err.Error(), "13.0")
		require.ErrorIs(t, r.MemAdvise(0x1000, 16, backend.AdviseSetPreferredLocation, loc), cudaerr.NotSupported)
	}
	assert.NoError(t, (&Runtime{major: 13}).hostNUMABefore13("op", backend.Location{Type: backend.LocationHostNUMA}))
	assert.NoError(t, r.hostNUMABefore13("op", backend.Location{Type: backend.LocationHost}))
}

// Bad shapes are refused before the call; a real call on a machine without a GPU fails with
// the runtime's error and does not crash (the pointer arrays are laid out as C expects).
func TestMemRangeGetAttributesShapes(t *testing.T) {
	rt := mustLoad(t)
	attrs := []backend.RangeAttr{backend.RangeReadMostly}
	require.ErrorIs(t, rt.MemRangeGetAttributes(0x1000, 16, nil, nil), cudaerr.InvalidValue)
	require.ErrorIs(t, rt.MemRangeGetAttributes(0x1000, 16, attrs, nil), cudaerr.InvalidValue)
	require.ErrorIs(t, rt.MemRangeGetAttributes(0x1000, 16, attrs, [][]int32{{}}), cudaerr.InvalidValue)
	_, err := rt.memRangeInfo(0x1000, 16, 0)
	require.ErrorIs(t, err, cudaerr.InvalidValue)
	_, err = rt.memRangeInfo(0x1000, 16, 4)
	require.Error(t, err, "0x1000 is no managed memory, with or without a GPU")
}
