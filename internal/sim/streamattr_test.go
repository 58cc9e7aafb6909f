package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

func TestStreamAttributesRoundTrip(t *testing.T) {
	_, d0, _ := open(t)
	s := mkStream(t, d0)
	p := malloc(t, d0, 1<<20)

	v, err := d0.StreamGetAttribute(s, backend.StreamAttrSyncPolicy)
	require.NoError(t, err)
	assert.Equal(t, backend.SyncAuto, v.SyncPolicy, "an unset policy reads as auto")

	w := backend.AccessPolicyWindow{Base: p, NumBytes: 1 << 20, HitRatio: 0.6, HitProp: backend.AccessPersisting, MissProp: backend.AccessStreaming}
	require.NoError(t, d0.StreamSetAttribute(s, backend.StreamAttrAccessPolicyWindow, backend.StreamAttrValue{Window: w}))
	require.NoError(t, d0.StreamSetAttribute(s, backend.StreamAttrSyncPolicy, backend.StreamAttrValue{SyncPolicy: backend.SyncBlockingSync}))
	require.NoError(t, d0.StreamSetAttribute(s, backend.StreamAttrPriority, backend.StreamAttrValue{Priority: -3}))

	v, err = d0.StreamGetAttribute(s, backend.StreamAttrAccessPolicyWindow)
	require.NoError(t, err)
	assert.Equal(t, w, v.Window)
	v, err = d0.StreamGetAttribute(s, backend.StreamAttrSyncPolicy)
	require.NoError(t, err)
	assert.Equal(t, backend.SyncBlockingSync, v.SyncPolicy)
	prio, err := d0.StreamGetPriority(s)
	require.NoError(t, err)
	assert.Equal(t, -3, prio, "the priority attribute is the stream's priority")

	require.NoError(t, d0.StreamSetAttribute(s, backend.StreamAttrPriority, backend.StreamAttrValue{Priority: -99}))
	prio, err = d0.StreamGetPriority(s)
	require.NoError(t, err)
	assert.Equal(t, greatestPriority, prio, "clamped into the range, as at creation")

	other := mkStream(t, d0)
	require.NoError(t, d0.StreamCopyAttributes(other, s))
	v, err = d0.StreamGetAttribute(other, backend.StreamAttrAccessPolicyWindow)
	require.NoError(t, err)
	assert.Equal(t, w, v.Window)
	prio, err = d0.StreamGetPriority(other)
	require.NoError(t, err)
	assert.Equal(t, greatestPriority, prio)
}

func TestStreamAttributesBadInput(t *testing.T) {
	_, d0, d1 := open(t)
	s := mkStream(t, d0)
	set := func(w backend.AccessPolicyWindow) error {
		return d0.StreamSetAttribute(s, backend.StreamAttrAccessPolicyWindow, backend.StreamAttrValue{Window: w})
	}
	err := set(backend.AccessPolicyWindow{NumBytes: simMaxPolicyWindow + 1})
	assert.ErrorIs(t, err, cudaerr.InvalidValue)
	assert.ErrorContains(t, err, "134213632")
	assert.ErrorIs(t, set(backend.AccessPolicyWindow{NumBytes: 64, HitRatio: 1.5}), cudaerr.InvalidValue)
	assert.ErrorIs(t, set(backend.AccessPolicyWindow{NumBytes: 64, HitRatio: -0.1}), cudaerr.InvalidValue)
	assert.ErrorIs(t, set(backend.AccessPolicyWindow{NumBytes: 64, MissProp: backend.AccessPersisting}), cudaerr.InvalidValue)
	assert.ErrorIs(t, d0.StreamSetAttribute(s, backend.StreamAttrSyncPolicy, backend.StreamAttrValue{SyncPolicy: 9}), cudaerr.InvalidValue)
	_, err = d0.StreamGetAttribute(s, 42)
	assert.ErrorIs(t, err, cudaerr.InvalidValue)
	_, err = d0.StreamGetAttribute(0, backend.StreamAttrPriority)
	assert.ErrorIs(t, err, cudaerr.InvalidResourceHandle)
	assert.ErrorIs(t, d0.StreamCopyAttributes(s, mkStream(t, d1)), cudaerr.InvalidResourceHandle)

	v, err := d0.StreamGetAttribute(s, backend.StreamAttrAccessPolicyWindow)
	require.NoError(t, err)
	assert.Zero(t, v.Window, "a refused window leaves the stream as it was")
}

func TestStreamGetIDIsUnique(t *testing.T) {
	_, d0, d1 := open(t)
	a, b := mkStream(t, d0), mkStream(t, d1)
	ia, err := d0.StreamGetID(a)
	require.NoError(t, err)
	ib, err := d0.StreamGetID(b)
	require.NoError(t, err)
	assert.NotEqual(t, ia, ib)
	again, err := d0.StreamGetID(a)
	require.NoError(t, err)
	assert.Equal(t, ia, again)
}

func TestUpdateCaptureDependencies(t *testing.T) {
	_, d0, _ := open(t)
	s := mkStream(t, d0)
	p := malloc(t, d0, 256)
	require.Error(t, d0.StreamUpdateCaptureDependencies(s, nil, backend.CaptureDepsSet), "not capturing")

	require.NoError(t, d0.StreamBeginCapture(s, backend.CaptureGlobal))
	require.NoError(t, d0.Memset(p, 1, 64, s))
	first, err := d0.StreamCaptureInfo(s)
	require.NoError(t, err)
	require.Len(t, first.Deps, 1)
	require.NoError(t, d0.Memset(p, 2, 64, s))
	second, err := d0.StreamCaptureInfo(s)
	require.NoError(t, err)

	assert.ErrorIs(t, d0.StreamUpdateCaptureDependencies(s, first.Deps, 7), cudaerr.InvalidValue)
	assert.ErrorIs(t, d0.StreamUpdateCaptureDependencies(s, []backend.GraphNode{0xdead}, backend.CaptureDepsAdd), cudaerr.InvalidValue)

	require.NoError(t, d0.StreamUpdateCaptureDependencies(s, first.Deps, backend.CaptureDepsSet))
	info, err := d0.StreamCaptureInfo(s)
	require.NoError(t, err)
	assert.Equal(t, first.Deps, info.Deps, "set replaces the tail")
	require.NoError(t, d0.StreamUpdateCaptureDependencies(s, second.Deps, backend.CaptureDepsAdd))
	info, err = d0.StreamCaptureInfo(s)
	require.NoError(t, err)
	assert.ElementsMatch(t, append(first.Deps, second.Deps...), info.Deps, "add extends it")

	// The next op depends on both: a join of the two memsets.
	require.NoError(t, d0.Memset(p, 3, 64, s))
	g, err := d0.StreamEndCapture(s)
	require.NoError(t, err)
	defer d0.GraphDestroy(g)
	from, to, err := d0.GraphEdges(g)
	require.NoError(t, err)
	assert.Len(t, from, 3)
	assert.Len(t, to, 3)
}

func TestEventRecordExternalInCapture(t *testing.T) {
	_, d0, _ := open(t)
	s := mkStream(t, d0)
	p := malloc(t, d0, 256)
	e, err := d0.EventCreate(backend.EventDefault)
	require.NoError(t, err)
	assert.ErrorIs(t, d0.EventRecordWithFlags(e, s, 8), cudaerr.InvalidValue)

	require.NoError(t, d0.StreamBeginCapture(s, backend.CaptureGlobal))
	require.NoError(t, d0.Memset(p, 1, 64, s))
	require.NoError(t, d0.EventRecordWithFlags(e, s, backend.EventRecordExternal))
	g, err := d0.StreamEndCapture(s)
	require.NoError(t, err)
	defer d0.GraphDestroy(g)
	nodes, err := d0.GraphNodes(g)
	require.NoError(t, err)
	require.Len(t, nodes, 2)
	typ, err := d0.GraphNodeType(nodes[1])
	require.NoError(t, err)
	assert.Equal(t, backend.NodeEventRecord, typ, "an external record is a node of the graph")

	// Outside a capture the runtime refuses the flag (the public RecordExternal then records
	// plainly), and the stream stays usable.
	require.ErrorIs(t, d0.EventRecordWithFlags(e, s, backend.EventRecordExternal), cudaerr.IllegalState)
	require.NoError(t, d0.EventRecordWithFlags(e, s, backend.EventRecordDefault))
	require.NoError(t, d0.EventSynchronize(e))
	require.NoError(t, d0.EventQuery(e))
}

func TestProfilerAndL2Reset(t *testing.T) {
	_, d0, _ := open(t)
	require.NoError(t, d0.ProfilerStart())
	assert.True(t, d0.(*device).profiling.Load())
	require.NoError(t, d0.ProfilerStop())
	assert.False(t, d0.(*device).profiling.Load())
	require.NoError(t, d0.ResetPersistingL2Cache())
	assert.Equal(t, int64(1), d0.(*device).l2Resets.Load())
	persist, err := d0.Attribute(backend.AttrMaxPersistingL2CacheSize)
	require.NoError(t, err)
	assert.Positive(t, persist)
}
