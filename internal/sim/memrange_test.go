package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

var (
	onDevice0 = backend.Location{Type: backend.LocationDevice}
	onDevice1 = backend.Location{Type: backend.LocationDevice, ID: 1}
	onHost    = backend.Location{Type: backend.LocationHost}
	onNode0   = backend.Location{Type: backend.LocationHostNUMA}
)

func rangeInfo(t *testing.T, d backend.Device, p backend.DevicePtr, n uint64) backend.RangeInfo {
	t.Helper()
	info, err := d.MemRangeInfo(p, n, 8)
	require.NoError(t, err)
	return info
}

// Advice on part of an allocation holds for the pages it touched: a query over those pages
// sees it, one over the whole allocation sees only what every page agrees on.
func TestMemRangeAdvicePageByPage(t *testing.T) {
	_, d, _ := open(t)
	m, err := d.MallocManaged(4*managedPage, backend.AttachGlobal)
	require.NoError(t, err)
	defer d.Free(m)
	second := m + managedPage

	require.Equal(t, backend.RangeInfo{}, rangeInfo(t, d, m, 4*managedPage), "nothing advised")
	require.NoError(t, d.MemAdvise(second, managedPage, backend.AdviseSetReadMostly, backend.Location{}))
	require.NoError(t, d.MemAdvise(second+10, 20, backend.AdviseSetPreferredLocation, onDevice1)) // inside the page: the page
	require.NoError(t, d.MemAdvise(m, 2*managedPage, backend.AdviseSetAccessedBy, onDevice0))
	require.NoError(t, d.MemAdvise(second, managedPage, backend.AdviseSetAccessedBy, onHost))
	require.NoError(t, d.MemAdvise(second, managedPage, backend.AdviseSetAccessedBy, onHost), "advised twice: listed once")

	require.Equal(t, backend.RangeInfo{ReadMostly: true, Preferred: onDevice1, AccessedBy: []int32{backend.CPUDevice, 0}},
		rangeInfo(t, d, second, managedPage))
	require.Equal(t, backend.RangeInfo{AccessedBy: []int32{0}}, rangeInfo(t, d, m, 2*managedPage), "only device 0 covers both pages")
	require.Equal(t, backend.RangeInfo{}, rangeInfo(t, d, m, 4*managedPage))

	// The one-attribute forms agree, the int form naming the host for a NUMA node.
	one := make([]int32, 1)
	require.NoError(t, d.MemRangeAttribute(second, managedPage, backend.RangePreferredLocation, one))
	require.Equal(t, int32(1), one[0])
	require.NoError(t, d.MemRangeAttribute(m, managedPage, backend.RangePreferredLocation, one))
	require.Equal(t, int32(noDevice), one[0])
	by := make([]int32, 3)
	require.NoError(t, d.MemRangeAttribute(second, managedPage, backend.RangeAccessedBy, by))
	require.Equal(t, []int32{backend.CPUDevice, 0, noDevice}, by)

	// Undoing advice merges the pages back.
	require.NoError(t, d.MemAdvise(m, 4*managedPage, backend.AdviseUnsetReadMostly, backend.Location{}))
	require.NoError(t, d.MemAdvise(m, 4*managedPage, backend.AdviseUnsetPreferredLocation, backend.Location{}))
	require.NoError(t, d.MemAdvise(m, 4*managedPage, backend.AdviseUnsetAccessedBy, onDevice0))
	require.NoError(t, d.MemAdvise(m, 4*managedPage, backend.AdviseUnsetAccessedBy, onHost))
	require.Equal(t, backend.RangeInfo{}, rangeInfo(t, d, m, 4*managedPage))
}

// Prefetches and preferred locations name host NUMA nodes, reported by type and id.
func TestMemRangeHostNUMA(t *testing.T) {
	_, d, _ := open(t)
	s := mkStream(t, d)
	m, err := d.MallocManaged(2*managedPage, backend.AttachGlobal)
	require.NoError(t, err)
	defer d.Free(m)
	require.NoError(t, d.MemAdvise(m, 2*managedPage, backend.AdviseSetPreferredLocation, backend.Location{Type: backend.LocationHostNUMACurrent}))
	require.NoError(t, d.MemPrefetch(m, managedPage, onNode0, s))
	require.NoError(t, d.MemPrefetch(m+managedPage, managedPage, onDevice1, s))
	require.NoError(t, d.StreamSynchronize(s))
	require.Equal(t, backend.RangeInfo{Preferred: onNode0, LastPrefetch: onNode0}, rangeInfo(t, d, m, managedPage))
	require.Equal(t, backend.RangeInfo{Preferred: onNode0}, rangeInfo(t, d, m, 2*managedPage), "prefetched to two places")

	typ, id := make([]int32, 1), make([]int32, 1)
	require.NoError(t, d.MemRangeAttribute(m+managedPage, 1, backend.RangeLastPrefetchLocationType, typ))
	require.NoError(t, d.MemRangeAttribute(m+managedPage, 1, backend.RangeLastPrefetchLocationID, id))
	require.Equal(t, []int32{int32(backend.LocationDevice), 1}, []int32{typ[0], id[0]})
	require.NoError(t, d.MemRangeAttribute(m, 1, backend.RangePreferredLocationType, typ))
	require.Equal(t, int32(backend.LocationHostNUMA), typ[0])
	legacy := make([]int32, 1)
	require.NoError(t, d.MemRangeAttribute(m, 1, backend.RangeLastPrefetchLocation, legacy))
	require.Equal(t, int32(backend.CPUDevice), legacy[0], "the int form names a NUMA node as the host")
}

func TestMemRangeBadInput(t *testing.T) {
	_, d, _ := open(t)
	s := mkStream(t, d)
	m, err := d.MallocManaged(managedPage, backend.AttachGlobal)
	require.NoError(t, err)
	requireCode(t, d.MemAdvise(m, 16, backend.AdviseSetAccessedBy, onNode0), cudaerr.InvalidValue, "accessed by a NUMA node")
	requireCode(t, d.MemAdvise(m, 16, backend.AdviseSetPreferredLocation, backend.Location{Type: backend.LocationHostNUMA, ID: 3}), cudaerr.InvalidValue)
	requireCode(t, d.MemAdvise(m, 16, backend.AdviseSetPreferredLocation, backend.Location{Type: 9}), cudaerr.InvalidValue)
	requireCode(t, d.MemAdvise(m, 16, 99, onHost), cudaerr.InvalidValue)
	requireCode(t, d.MemPrefetch(m, 16, backend.Location{}, s), cudaerr.InvalidValue, "no location")
	requireCode(t, d.MemAdvise(m, managedPage+1, backend.AdviseSetReadMostly, onHost), cudaerr.InvalidValue, "past the end")
	_, err = d.MemRangeInfo(m, 16, 0)
	requireCode(t, err, cudaerr.InvalidValue)
	_, err = d.MemRangeInfo(m, 2*managedPage, 1)
	requireCode(t, err, cudaerr.InvalidValue, "past the end")
	requireCode(t, d.MemRangeAttribute(m, 16, 42, make([]int32, 1)), cudaerr.InvalidValue)
	require.NoError(t, d.Free(m))
	_, err = d.MemRangeInfo(m, 16, 1)
	requireCode(t, err, cudaerr.InvalidValue, "freed")
	m2, err := d.MallocManaged(64, backend.AttachGlobal)
	require.NoError(t, err)
	require.NoError(t, d.Free(m2))
}

// Pinned memory from HostAlloc and memory registered mapped have a device address (their
// host address); memory registered without the flag has none, and says so both ways.
func TestMappedHostAddresses(t *testing.T) {
	_, d, _ := open(t)
	p, err := d.HostAlloc(256, 0)
	require.NoError(t, err)
	defer d.HostFree(p)
	dp, err := d.HostDevicePointer(p)
	require.NoError(t, err)
	require.Equal(t, backend.DevicePtr(uintptr(p)), dp)

	mapped, plain := make([]byte, 4096), make([]byte, 4096)
	require.NoError(t, d.HostRegister(hostPtr(mapped), 4096, backend.HostRegisterMapped))
	defer d.HostUnregister(hostPtr(mapped))
	require.NoError(t, d.HostRegister(hostPtr(plain), 4096, 0))
	defer d.HostUnregister(hostPtr(plain))
	a, err := d.PointerAttributes(uintptr(hostPtr(mapped)) + 8)
	require.NoError(t, err)
	require.Equal(t, uintptr(hostPtr(mapped))+8, a.DevicePointer)
	a, err = d.PointerAttributes(uintptr(hostPtr(plain)))
	require.NoError(t, err)
	require.Equal(t, backend.MemoryHost, a.Type)
	require.Zero(t, a.DevicePointer, "no device address without HostRegisterMapped")
	_, err = d.HostDevicePointer(hostPtr(plain))
	requireCode(t, err, cudaerr.InvalidValue, "registered without the mapped flag")
}
