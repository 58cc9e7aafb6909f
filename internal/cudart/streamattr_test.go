package cudart

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// The union's layout is the 13.0 header's: the window's fields at 0, 8, 16, 20, 24; the
// policy and the priority an int at 0.
func TestAttrValueLayout(t *testing.T) {
	w := backend.AccessPolicyWindow{Base: 0x7f0000001000, NumBytes: 1 << 20, HitRatio: 0.25,
		HitProp: backend.AccessPersisting, MissProp: backend.AccessStreaming}
	var v attrValue
	v.encode(backend.StreamAttrAccessPolicyWindow, backend.StreamAttrValue{Window: w})
	assert.Equal(t, uint64(0x7f0000001000), v.u64(0))
	assert.Equal(t, uint64(1<<20), v.u64(8))
	assert.Equal(t, math.Float32bits(0.25), v.u32(16))
	assert.Equal(t, uint32(2), v.u32(20))
	assert.Equal(t, uint32(1), v.u32(24))
	assert.Equal(t, w, v.decode(backend.StreamAttrAccessPolicyWindow).Window)

	var p attrValue
	p.encode(backend.StreamAttrPriority, backend.StreamAttrValue{Priority: -4})
	assert.Equal(t, uint32(0xfffffffc), p.u32(0))
	assert.Equal(t, int32(-4), p.decode(backend.StreamAttrPriority).Priority)

	var s attrValue
	s.encode(backend.StreamAttrSyncPolicy, backend.StreamAttrValue{SyncPolicy: backend.SyncYield})
	assert.Equal(t, uint32(3), s.u32(0))
	assert.Equal(t, backend.SyncYield, s.decode(backend.StreamAttrSyncPolicy).SyncPolicy)
}

func TestStreamControlSymbolsResolve(t *testing.T) {
	rt := mustLoad(t)
	ids := []int{fnStreamGetAttribute, fnStreamSetAttribute, fnStreamCopyAttributes, fnCtxResetPersistingL2Cache,
		fnStreamUpdateCaptureDependencies, fnEventRecordWithFlags, fnProfilerStart, fnProfilerStop, fnStreamIsCapturing}
	if rt.Major() >= 12 {
		ids = append(ids, fnStreamGetId)
	}
	for _, id := range ids {
		_, err := rt.syms.get(id)
		assert.NoError(t, err, runtimeSymNames[id])
	}
}
