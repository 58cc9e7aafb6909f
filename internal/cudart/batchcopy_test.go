package cudart

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/backend"
)

func TestMemcpyAttributesLayout(t *testing.T) {
	// cudaMemcpyAttributes: an enum, two cudaMemLocation {enum, int} and an unsigned int.
	assert.Equal(t, uintptr(24), unsafe.Sizeof(memcpyAttributes{}))
	assert.Equal(t, uintptr(4), unsafe.Offsetof(memcpyAttributes{}.srcLocType))
	assert.Equal(t, uintptr(20), unsafe.Offsetof(memcpyAttributes{}.flags))
}

// TestMemcpyBatchFallsBackWithoutTheSymbol: 11.8 has no cudaMemcpyBatchAsync, so the batch is
// a loop of cudaMemcpyAsync, which without a GPU fails on its first copy, naming it.
func TestMemcpyBatchFallsBackWithoutTheSymbol(t *testing.T) {
	needDebian118(t)
	rt := mustLoad(t)
	if hasGPU() || rt.Major() >= 12 {
		t.Skip("a GPU, or a runtime that may have the batched call")
	}
	_, err := rt.syms.get(fnMemcpyBatchAsync)
	require.ErrorIs(t, err, ErrSymbolNotFound)
	idx, err := rt.MemcpyBatchAsync([]backend.BatchCopy{{Dst: 0x1000, Src: 0x2000, N: 8}, {Dst: 0x1000, Src: 0x2000, N: 8}}, 0)
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrSymbolNotFound)
	assert.Equal(t, 0, idx)
	idx, err = rt.MemcpyBatchAsync(nil, 0)
	require.NoError(t, err, "an empty batch calls nothing")
	assert.Equal(t, -1, idx)
}

// TestGPUMemcpyBatch: host to device, device to device in pieces and device to host in
// batches, then a batch whose middle copy has a null destination.
func TestGPUMemcpyBatch(t *testing.T) {
	rt := gpuRuntime(t)
	const n = 4096
	a, err := rt.Malloc(n)
	require.NoError(t, err)
	defer rt.Free(a) //nolint:errcheck
	b, err := rt.Malloc(n)
	require.NoError(t, err)
	defer rt.Free(b) //nolint:errcheck
	s, err := rt.StreamCreateWithPriority(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	defer rt.StreamDestroy(s) //nolint:errcheck
	hp, err := rt.HostAlloc(2*n, backend.HostAllocDefault)
	require.NoError(t, err)
	defer rt.FreeHost(hp) //nolint:errcheck
	host := unsafe.Slice((*byte)(hp), 2*n)
	for i := range host[:n] {
		host[i] = byte(i*13 + 1)
	}

	idx, err := rt.MemcpyBatchAsync([]backend.BatchCopy{{Dst: a, SrcHost: hp, N: n}}, s)
	require.NoError(t, err)
	assert.Equal(t, -1, idx)
	// Swap a's halves into b: 64 copies of 64 bytes.
	var pieces []backend.BatchCopy
	for off := uint64(0); off < n; off += 64 {
		pieces = append(pieces, backend.BatchCopy{Dst: b + DevicePtr((off+n/2)%n), Src: a + DevicePtr(off), N: 64})
	}
	_, err = rt.MemcpyBatchAsync(pieces, s)
	require.NoError(t, err)
	_, err = rt.MemcpyBatchAsync([]backend.BatchCopy{{DstHost: unsafe.Add(hp, n), Src: b, N: n}}, s)
	require.NoError(t, err)
	require.NoError(t, rt.StreamSynchronize(s))
	assert.Equal(t, host[n/2:n], host[n:n+n/2])
	assert.Equal(t, host[:n/2], host[n+n/2:])

	idx, err = rt.MemcpyBatchAsync([]backend.BatchCopy{
		{Dst: b, Src: a, N: 64},
		{Dst: 0, Src: a, N: 64},
		{Dst: b, Src: a, N: 64},
	}, s)
	require.Error(t, err)
	if rt.Major() >= 13 {
		assert.Equal(t, -1, idx, "13.0 reports no index")
	} else {
		assert.Equal(t, 1, idx)
	}
	_ = rt.GetLastError()
	require.NoError(t, rt.StreamSynchronize(s), "the device stays usable")
}
