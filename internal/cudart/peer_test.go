package cudart

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// TestPeerSymbolsResolve: every runtime from 11.4 exports the peer calls, so the loaded one
// must resolve them all; without a GPU they answer an error, not a crash.
func TestPeerSymbolsResolve(t *testing.T) {
	rt := mustLoad(t)
	for _, id := range []int{fnDeviceCanAccessPeer, fnDeviceGetP2PAttribute, fnDeviceEnablePeerAccess,
		fnDeviceDisablePeerAccess, fnMemcpyPeerAsync} {
		_, err := rt.syms.get(id)
		require.NoError(t, err, runtimeSymNames[id])
	}
	if hasGPU() {
		return // the GPU tests of interop exercise the calls themselves
	}
	_, err := rt.DeviceCanAccessPeer(0, 1)
	require.Error(t, err)
	_, err = rt.DeviceGetP2PAttribute(backend.P2PAccessSupported, 0, 1)
	require.Error(t, err)
}
