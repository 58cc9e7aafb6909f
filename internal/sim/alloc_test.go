package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// A stream with a pending wait on an event recorded after a free on another stream reuses the
// freed block even before the free has run (reuse that follows event dependencies).
func TestPoolReuseFollowsPendingEventWait(t *testing.T) {
	_, d, _ := open(t)
	g := newGate(t)
	ks := kernels(t, d, map[string]backend.SimKernel{"fill": gatedFill(g)})
	s1, s2 := mkStream(t, d), mkStream(t, d)
	pool, err := d.MemPoolCreate(backend.PoolProps{Location: backend.Location{Type: backend.LocationDevice}})
	require.NoError(t, err)
	p, err := d.MallocFromPoolAsync(4096, pool, s1)
	require.NoError(t, err)
	launch(t, d, ks["fill"], s1, ptrArg(p), u64Arg(512), f64Arg(1)) // holds s1 until released
	require.NoError(t, d.FreeAsync(p, s1))
	ev, err := d.EventCreate(backend.EventDisableTiming)
	require.NoError(t, err)
	require.NoError(t, d.EventRecord(ev, s1))
	blocker := mkStream(t, d)
	launch(t, d, ks["fill"], blocker, ptrArg(malloc(t, d, 4096)), u64Arg(512), f64Arg(1))
	require.NoError(t, d.StreamWaitEvent(s2, blocker0(t, d, blocker)))
	require.NoError(t, d.StreamWaitEvent(s2, ev))
	q, err := d.MallocFromPoolAsync(4096, pool, s2)
	require.NoError(t, err)
	require.Equal(t, p, q)

	// With no dependency, and the free not yet run, a third stream gets fresh memory.
	require.NoError(t, d.FreeAsync(q, s2))
	s3 := mkStream(t, d)
	r, err := d.MallocFromPoolAsync(4096, pool, s3)
	require.NoError(t, err)
	require.NotEqual(t, p, r)
	g.release()
	require.NoError(t, d.Synchronize())
}

// blocker0 records an event on s (which a gated kernel holds), so a wait on it stays queued.
func blocker0(t *testing.T, d backend.Device, s backend.Stream) backend.Event {
	t.Helper()
	ev, err := d.EventCreate(backend.EventDisableTiming)
	require.NoError(t, err)
	require.NoError(t, d.EventRecord(ev, s))
	return ev
}

func TestAllocBadInput(t *testing.T) {
	_, d, d1 := open(t)
	s := mkStream(t, d)
	requireCode(t, d.FreeAsync(malloc(t, d, 64), s), cudaerr.InvalidValue, "cudaMalloc memory is not a pool allocation")
	requireCode(t, d.FreeAsync(0x1234, s), cudaerr.InvalidValue)
	_, err := d.MallocFromPoolAsync(64, 0x99, s)
	requireCode(t, err, cudaerr.InvalidValue)
	_, err = d.MallocAsync(0, s)
	requireCode(t, err, cudaerr.InvalidValue)
	def, err := d.DefaultMemPool()
	require.NoError(t, err)
	requireCode(t, d.MemPoolDestroy(def), cudaerr.InvalidValue)
	other, err := d1.DefaultMemPool()
	require.NoError(t, err)
	_, err = d.MallocFromPoolAsync(64, other, s)
	requireCode(t, err, cudaerr.InvalidValue, "a pool of another device")
	_, err = d.MemPoolCreate(backend.PoolProps{Location: backend.Location{Type: backend.LocationDevice, ID: 1}})
	requireCode(t, err, cudaerr.InvalidValue)
	requireCode(t, d.MemPoolSetAttribute(def, backend.PoolUsedMemHigh, 5), cudaerr.InvalidValue)
	requireCode(t, d.MemPoolSetAccess(def, 7, backend.AccessReadWrite), cudaerr.InvalidDevice)
	requireCode(t, d.MemPoolSetAccess(def, 0, backend.AccessNone), cudaerr.InvalidValue)

	_, err = d.MallocManaged(64, backend.AttachSingle)
	requireCode(t, err, cudaerr.InvalidValue)
	m, err := d.MallocManaged(64, backend.AttachGlobal)
	require.NoError(t, err)
	requireCode(t, d.MemPrefetch(m, 128, backend.Location{Type: backend.LocationHost}, s), cudaerr.InvalidValue, "past the end")
	requireCode(t, d.MemPrefetch(m, 64, backend.Location{Type: backend.LocationDevice, ID: 9}, s), cudaerr.InvalidDevice)
	requireCode(t, d.StreamAttachMem(s, m+8, 0, backend.AttachSingle), cudaerr.InvalidValue, "not the whole allocation")
	requireCode(t, d.MemRangeAttribute(m, 64, backend.RangeReadMostly, make([]int32, 2)), cudaerr.InvalidValue)
	require.NoError(t, d.Free(m))
	_, err = d.ManagedHost(m, 64)
	requireCode(t, err, cudaerr.InvalidValue, "freed managed memory")
	_, err = d.HostDevicePointer(hostPtr([]byte{1}))
	requireCode(t, err, cudaerr.InvalidValue)
}
