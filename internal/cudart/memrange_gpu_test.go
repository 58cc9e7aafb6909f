package cudart

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// The binding reads back what advice and a prefetch set, through cudaMemRangeGetAttributes
// and through the one-attribute call, on part of an allocation and on the whole.
func TestGPUMemRangeInfo(t *testing.T) {
	rt := gpuRuntime(t)
	const chunk = 2 << 20 // whole pages on every platform
	m, err := rt.MallocManaged(2*chunk, backend.AttachGlobal)
	require.NoError(t, err)
	defer func() { require.NoError(t, rt.Free(m)) }()
	s, err := rt.StreamCreateWithPriority(1, 0)
	require.NoError(t, err)
	defer func() { require.NoError(t, rt.StreamDestroy(s)) }()

	dev0 := backend.Location{Type: backend.LocationDevice}
	host := backend.Location{Type: backend.LocationHost}
	require.NoError(t, rt.MemAdvise(m, chunk, backend.AdviseSetReadMostly, dev0))
	require.NoError(t, rt.MemAdvise(m, chunk, backend.AdviseSetPreferredLocation, host))
	require.NoError(t, rt.MemAdvise(m, 2*chunk, backend.AdviseSetAccessedBy, dev0))
	require.NoError(t, rt.MemPrefetchAsync(m, chunk, dev0, s))
	require.NoError(t, rt.StreamSynchronize(s))

	first, err := rt.memRangeInfo(m, chunk, 8)
	require.NoError(t, err)
	require.Equal(t, backend.RangeInfo{ReadMostly: true, Preferred: host, LastPrefetch: dev0, AccessedBy: []int32{0}}, first)
	whole, err := rt.memRangeInfo(m, 2*chunk, 8)
	require.NoError(t, err)
	require.Equal(t, backend.RangeInfo{AccessedBy: []int32{0}}, whole)

	one := make([]int32, 1)
	require.NoError(t, rt.MemRangeGetAttribute(m, chunk, backend.RangePreferredLocation, one))
	require.Equal(t, int32(backend.CPUDevice), one[0])
	require.NoError(t, rt.MemRangeGetAttribute(m, chunk, backend.RangeLastPrefetchLocation, one))
	require.Equal(t, int32(0), one[0])
}
