package sim

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

func TestPeerAccessCodes(t *testing.T) {
	_, d0, d1 := open(t)

	ok, err := d0.CanAccessPeer(1)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = d0.CanAccessPeer(0)
	require.NoError(t, err)
	require.False(t, ok, "a device is not its own peer")
	_, err = d0.CanAccessPeer(2)
	require.ErrorIs(t, err, cudaerr.InvalidDevice)

	for attr, want := range map[backend.P2PAttr]int{
		backend.P2PPerformanceRank: 0, backend.P2PAccessSupported: 1, backend.P2PNativeAtomics: 1,
		backend.P2PCudaArrayAccess: 1, backend.P2POnlyPartialAtomics: 0,
	} {
		v, err := d0.P2PAttribute(attr, 1)
		require.NoError(t, err)
		require.Equal(t, want, v, "attribute %d", attr)
	}
	_, err = d0.P2PAttribute(9, 1)
	require.ErrorIs(t, err, cudaerr.InvalidValue)
	_, err = d0.P2PAttribute(backend.P2PAccessSupported, 0)
	require.ErrorIs(t, err, cudaerr.InvalidDevice)

	require.ErrorIs(t, d0.EnablePeerAccess(0), cudaerr.InvalidDevice)
	require.ErrorIs(t, d0.EnablePeerAccess(-1), cudaerr.InvalidDevice)
	require.ErrorIs(t, d0.DisablePeerAccess(1), cudaerr.PeerAccessNotEnabled)
	require.NoError(t, d0.EnablePeerAccess(1))
	err = d0.EnablePeerAccess(1)
	require.ErrorIs(t, err, cudaerr.PeerAccessAlreadyEnabled)
	require.ErrorIs(t, d0.LastError(), cudaerr.PeerAccessAlreadyEnabled, "a refusal is the last error, as in the runtime")
	require.NoError(t, d0.LastError())
	// Access is one way.
	require.ErrorIs(t, d1.DisablePeerAccess(0), cudaerr.PeerAccessNotEnabled)
	require.NoError(t, d0.DisablePeerAccess(1))
	require.ErrorIs(t, d0.DisablePeerAccess(1), cudaerr.PeerAccessNotEnabled)
}

func TestMemcpyPeerAsync(t *testing.T) {
	_, d0, d1 := open(t)
	s0 := mkStream(t, d0)
	a := malloc(t, d0, 256)
	b := malloc(t, d1, 256)
	src := make([]byte, 256)
	for i := range src {
		src[i] = byte(i)
	}
	require.NoError(t, d0.CopyHtoD(a, unsafe.Pointer(&src[0]), 256, s0))
	// Ordered on s0 after the host copy, with no peer access enabled.
	require.NoError(t, d0.MemcpyPeerAsync(b, 1, a, 0, 256, s0))
	require.NoError(t, d0.StreamSynchronize(s0))
	got := make([]byte, 256)
	s1 := mkStream(t, d1)
	require.NoError(t, d1.CopyDtoH(unsafe.Pointer(&got[0]), b, 256, s1))
	require.Equal(t, src, got)

	// Pointers that are not the named devices' memory, bad ordinals, another device's stream.
	require.ErrorIs(t, d0.MemcpyPeerAsync(b, 0, a, 0, 256, s0), cudaerr.InvalidValue)
	require.ErrorIs(t, d0.MemcpyPeerAsync(b, 1, a, 1, 256, s0), cudaerr.InvalidValue)
	require.ErrorIs(t, d0.MemcpyPeerAsync(b, 1, a, 0, 257, s0), cudaerr.InvalidValue)
	require.ErrorIs(t, d0.MemcpyPeerAsync(b, 5, a, 0, 256, s0), cudaerr.InvalidDevice)
	require.ErrorIs(t, d0.MemcpyPeerAsync(b, 1, a, 0, 256, s1), cudaerr.InvalidResourceHandle)
	require.NoError(t, d0.MemcpyPeerAsync(b, 1, a, 0, 0, s0), "a copy of nothing is no work")

	// Freed before the stream reaches it: the copying device faults, and with it the other,
	// as every GPU of a process does after a sticky fault.
	gt := newGate(t)
	require.NoError(t, d0.LaunchHostFunc(s0, func() { <-gt.ch }))
	require.NoError(t, d0.MemcpyPeerAsync(b, 1, a, 0, 256, s0))
	require.NoError(t, d1.Free(b))
	gt.release()
	require.ErrorIs(t, d0.StreamSynchronize(s0), cudaerr.IllegalAddress)
	_, err := d1.Malloc(64)
	require.ErrorIs(t, err, cudaerr.IllegalAddress)
}
