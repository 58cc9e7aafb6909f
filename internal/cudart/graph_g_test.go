package cudart

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInstantiateParamsLayout(t *testing.T) {
	var p instantiateParams
	assert.Equal(t, uintptr(32), unsafe.Sizeof(p), "cudaGraphInstantiateParams")
	assert.Equal(t, uintptr(8), unsafe.Offsetof(p.uploadStream))
	assert.Equal(t, uintptr(16), unsafe.Offsetof(p.errNode))
	assert.Equal(t, uintptr(24), unsafe.Offsetof(p.result))
}

// TestGraphGSymbolsResolve: the topology, graph memory and user object calls are in every
// runtime from 11.4, the instantiate-with-params ones from 12.0; without a GPU the calls
// answer an error, not a crash.
func TestGraphGSymbolsResolve(t *testing.T) {
	rt := mustLoad(t)
	ids := []int{fnGraphNodeGetDependencies, fnGraphNodeGetDependentNodes, fnGraphRemoveDependencies,
		fnGraphDestroyNode, fnGraphNodeFindInClone, fnGraphNodeGetEnabled, fnDeviceGraphMemTrim,
		fnDeviceGetGraphMemAttribute, fnDeviceSetGraphMemAttribute, fnUserObjectCreate, fnUserObjectRetain,
		fnUserObjectRelease, fnGraphRetainUserObject, fnGraphReleaseUserObject}
	if rt.Major() >= 12 {
		ids = append(ids, fnGraphInstantiateWithParams, fnGraphExecGetFlags)
	} else {
		assert.False(t, rt.HasInstantiateWithParams())
	}
	for _, id := range ids {
		_, err := rt.syms.get(id)
		require.NoError(t, err, runtimeSymNames[id])
	}
	if hasGPU() {
		return
	}
	_, err := rt.GraphMemAttribute(0, 0)
	require.Error(t, err)
	hosts := hostFuncs.pending()
	_, err = rt.UserObjectCreate(func() {})
	require.Error(t, err)
	assert.Equal(t, hosts, hostFuncs.pending(), "a user object never made forgets its destructor")
}
