//go:build linux

package remote_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

func TestBackendDescribesTheWorkersDevices(t *testing.T) {
	be, dv := open(t)
	local := newSim()
	ldv, err := local.Open(0)
	require.NoError(t, err)

	assert.Equal(t, "isolated-sim", be.Name())
	n, err := be.DeviceCount()
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	rv, err := be.RuntimeVersion()
	require.NoError(t, err)
	lrv, _ := local.RuntimeVersion()
	assert.Equal(t, lrv, rv)
	assert.Equal(t, 0, dv.Ordinal())

	name, err := dv.Name()
	require.NoError(t, err)
	lname, _ := ldv.Name()
	assert.Equal(t, lname, name)
	for _, a := range []backend.Attr{backend.AttrWarpSize, backend.AttrMultiProcessorCount, backend.AttrComputeCapabilityMajor} {
		v, err := dv.Attribute(a)
		require.NoError(t, err)
		lv, _ := ldv.Attribute(a)
		assert.Equal(t, lv, v, "attribute %d", a)
	}
	bus, err := dv.PCIBusID()
	require.NoError(t, err)
	lbus, _ := ldv.PCIBusID()
	assert.Equal(t, lbus, bus)
	free, total, err := dv.MemInfo()
	require.NoError(t, err)
	assert.Equal(t, uint64(1<<30), total)
	assert.LessOrEqual(t, free, total)
	least, greatest, err := dv.StreamPriorityRange()
	require.NoError(t, err)
	ll, lg, _ := ldv.StreamPriorityRange()
	assert.Equal(t, [2]int{ll, lg}, [2]int{least, greatest})
}

func TestOpenRefusesASecondOrdinalAndBadOnes(t *testing.T) {
	be, dv := open(t)
	again, err := be.Open(0)
	require.NoError(t, err)
	assert.Same(t, dv, again)
	_, err = be.Open(1)
	require.ErrorIs(t, err, cudaerr.InvalidDevice)
	assert.Contains(t, err.Error(), "needs a worker of its own")

	// A fresh worker refuses an ordinal its backend does not have, with the backend's code.
	be3 := startOnly(t)
	_, err = be3.Open(7)
	require.ErrorIs(t, err, cudaerr.InvalidDevice)
}

func TestMallocFreeAndErrorsMatchInProcess(t *testing.T) {
	_, dv := open(t)
	ldv, err := newSim().Open(0)
	require.NoError(t, err)

	p, err := dv.Malloc(1 << 20)
	require.NoError(t, err)
	assert.NotZero(t, p)
	free0, _, err := dv.MemInfo()
	require.NoError(t, err)
	require.NoError(t, dv.Free(p))
	free1, _, err := dv.MemInfo()
	require.NoError(t, err)
	assert.Greater(t, free1, free0, "the free returned the memory")

	// A bad free (a double one): the same code, operation and message as in process.
	lp, err := ldv.Malloc(1 << 20)
	require.NoError(t, err)
	require.Equal(t, p, lp, "the simulator's addresses are deterministic")
	require.NoError(t, ldv.Free(lp))
	rerr := dv.Free(p)
	lerr := ldv.Free(lp)
	require.Error(t, lerr)
	lc, _ := cudaerr.CodeOf(lerr)
	require.ErrorIs(t, rerr, lc)
	assert.Equal(t, lerr.Error(), rerr.Error())
	var ce *cudaerr.Error
	if errors.As(lerr, &ce) {
		require.ErrorAs(t, rerr, &ce)
	}

	// The device stays usable.
	p, err = dv.Malloc(256)
	require.NoError(t, err)
	require.NoError(t, dv.Free(p))
}

func TestMemsetCopyStreamsAndEvents(t *testing.T) {
	_, dv := open(t)
	s, err := dv.StreamCreate(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	flags, err := dv.StreamGetFlags(s)
	require.NoError(t, err)
	assert.Equal(t, backend.StreamNonBlocking, flags)
	ord, err := dv.StreamGetDevice(s)
	require.NoError(t, err)
	assert.Equal(t, 0, ord)

	a, err := dv.Malloc(4096)
	require.NoError(t, err)
	b, err := dv.Malloc(4096)
	require.NoError(t, err)
	start, err := dv.EventCreate(backend.EventDefault)
	require.NoError(t, err)
	end, err := dv.EventCreate(backend.EventDefault)
	require.NoError(t, err)

	require.NoError(t, dv.EventRecord(start, s))
	require.NoError(t, dv.Memset(a, 0x5a, 4096, s))
	require.NoError(t, dv.CopyDtoD(b, a, 4096, s))
	require.NoError(t, dv.EventRecord(end, s))
	require.NoError(t, dv.EventSynchronize(end))
	require.NoError(t, dv.EventQuery(end))
	require.NoError(t, dv.StreamQuery(s))
	ms, err := dv.EventElapsed(start, end)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, ms, float32(0))
	require.NoError(t, dv.StreamSynchronize(s))

	// A copy out of range fails with the backend's code and leaves the device usable. The
	// copy is posted: its error comes back on the stream's next query, once.
	require.NoError(t, dv.CopyDtoD(b, a, 1<<20, s))
	err = dv.StreamQuery(s)
	require.Error(t, err)
	_, ok := cudaerr.CodeOf(err)
	assert.True(t, ok, "a CUDA code crosses: %v", err)
	require.NoError(t, dv.StreamQuery(s), "answered once")
	require.NoError(t, dv.Synchronize())

	require.NoError(t, dv.EventDestroy(start))
	require.NoError(t, dv.EventDestroy(end))
	require.NoError(t, dv.Free(a))
	require.NoError(t, dv.Free(b))
	require.NoError(t, dv.StreamDestroy(s))
	err = dv.StreamQuery(s)
	require.Error(t, err, "a destroyed stream is refused")
}

func TestStreamOrderedAllocAndPools(t *testing.T) {
	_, dv := open(t)
	s, err := dv.StreamCreate(backend.StreamDefault, 0)
	require.NoError(t, err)
	p, err := dv.MallocAsync(1<<16, s)
	require.NoError(t, err)
	require.NoError(t, dv.Memset(p, 1, 1<<16, s))
	require.NoError(t, dv.FreeAsync(p, s))
	require.NoError(t, dv.StreamSynchronize(s))

	pool, err := dv.DefaultMemPool()
	require.NoError(t, err)
	require.NoError(t, dv.MemPoolSetAttribute(pool, backend.PoolReleaseThreshold, 1<<20))
	v, err := dv.MemPoolGetAttribute(pool, backend.PoolReleaseThreshold)
	require.NoError(t, err)
	assert.Equal(t, uint64(1<<20), v)
	require.NoError(t, dv.MemPoolTrimTo(pool, 0))

	own, err := dv.MemPoolCreate(backend.PoolProps{Location: backend.Location{Type: backend.LocationDevice, ID: 0}})
	require.NoError(t, err)
	q, err := dv.MallocFromPoolAsync(4096, own, s)
	require.NoError(t, err)
	attrs, err := dv.PointerAttributes(uintptr(q))
	require.NoError(t, err)
	assert.Equal(t, backend.MemoryDevice, attrs.Type)
	require.NoError(t, dv.FreeAsync(q, s))
	require.NoError(t, dv.StreamSynchronize(s))
	require.NoError(t, dv.MemPoolDestroy(own))
	require.NoError(t, dv.StreamDestroy(s))
}

func TestGraphsCrossAsHandles(t *testing.T) {
	_, dv := open(t)
	g, err := dv.GraphCreate()
	require.NoError(t, err)
	p, err := dv.Malloc(1024)
	require.NoError(t, err)
	a, err := dv.GraphAddMemsetNode(g, nil, p, 7, 1024)
	require.NoError(t, err)
	b, err := dv.GraphAddEmptyNode(g, []backend.GraphNode{a})
	require.NoError(t, err)
	nodes, err := dv.GraphNodes(g)
	require.NoError(t, err)
	assert.ElementsMatch(t, []backend.GraphNode{a, b}, nodes)
	from, to, err := dv.GraphEdges(g)
	require.NoError(t, err)
	assert.Equal(t, []backend.GraphNode{a}, from)
	assert.Equal(t, []backend.GraphNode{b}, to)
	typ, err := dv.GraphNodeType(a)
	require.NoError(t, err)
	assert.Equal(t, backend.NodeMemset, typ)

	x, err := dv.GraphInstantiate(g, 0)
	require.NoError(t, err)
	s, err := dv.StreamCreate(backend.StreamDefault, 0)
	require.NoError(t, err)
	k, err := dv.GraphLaunchN(x, s, 3)
	require.NoError(t, err)
	assert.Equal(t, 3, k)
	require.NoError(t, dv.StreamSynchronize(s))
	info, err := dv.GraphExecUpdate(x, g)
	require.NoError(t, err)
	assert.Equal(t, backend.UpdateSuccess, info.Result)

	// GraphLaunchN's count crosses with its error.
	k, err = dv.GraphLaunchN(x+12345, s, 2)
	require.Error(t, err)
	assert.Zero(t, k)

	require.NoError(t, dv.GraphExecDestroy(x))
	require.NoError(t, dv.GraphDestroy(g))
	require.NoError(t, dv.StreamDestroy(s))
	require.NoError(t, dv.Free(p))
}

func TestRefusedMethodsSayWhy(t *testing.T) {
	_, dv := open(t)
	for name, err := range map[string]error{
		"HostRegister":   dv.HostRegister(nil, 1, 0),
		"LaunchHostFunc": dv.LaunchHostFunc(0, func() {}),
		"MemPoolImportFD": func() error {
			_, err := dv.MemPoolImportFD(0)
			return err
		}(),
	} {
		require.ErrorIs(t, err, cudaerr.NotSupported, name)
		assert.Contains(t, err.Error(), "not supported on an isolated device: "+name)
	}
	// The device is untouched.
	_, _, err := dv.MemInfo()
	require.NoError(t, err)
}
