package sim

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

func TestMemcpyBatchAsyncMovesEveryCopy(t *testing.T) {
	_, d, _ := open(t)
	s := mkStream(t, d)
	a, b := malloc(t, d, 256), malloc(t, d, 256)
	hp, err := d.HostAlloc(256, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.HostFree(hp) })
	host := unsafe.Slice((*byte)(hp), 256)
	for i := range host[:128] {
		host[i] = byte(i + 1)
	}

	idx, err := d.MemcpyBatchAsync([]backend.BatchCopy{
		{Dst: a, SrcHost: hp, N: 128},
	}, s)
	require.NoError(t, err)
	assert.Equal(t, -1, idx)
	// A second batch, ordered after the first on s: a to b in two pieces, then back to the host.
	idx, err = d.MemcpyBatchAsync([]backend.BatchCopy{
		{Dst: b + 64, Src: a, N: 64},
		{Dst: b, Src: a + 64, N: 64},
	}, s)
	require.NoError(t, err)
	assert.Equal(t, -1, idx)
	_, err = d.MemcpyBatchAsync([]backend.BatchCopy{{DstHost: unsafe.Add(hp, 128), Src: b, N: 128}}, s)
	require.NoError(t, err)
	require.NoError(t, d.StreamSynchronize(s))
	for i := 0; i < 64; i++ {
		require.Equal(t, byte(65+i), host[128+i], "byte %d", i)
		require.Equal(t, byte(1+i), host[192+i], "byte %d", 64+i)
	}
}

func TestMemcpyBatchAsyncNamesTheFailingCopy(t *testing.T) {
	_, d, _ := open(t)
	s := mkStream(t, d)
	a, b := malloc(t, d, 256), malloc(t, d, 256)
	idx, err := d.MemcpyBatchAsync([]backend.BatchCopy{
		{Dst: b, Src: a, N: 16},
		{Dst: b + 200, Src: a, N: 100}, // past b's end
		{Dst: b, Src: a, N: 16},
	}, s)
	require.ErrorIs(t, err, cudaerr.InvalidValue)
	assert.Equal(t, 1, idx)

	idx, err = d.MemcpyBatchAsync([]backend.BatchCopy{{DstHost: unsafe.Pointer(&[4]byte{}), SrcHost: unsafe.Pointer(&[4]byte{}), N: 4}}, s)
	require.ErrorIs(t, err, cudaerr.InvalidValue)
	assert.Equal(t, 0, idx)
	assert.Contains(t, err.Error(), "host to host")

	idx, err = d.MemcpyBatchAsync([]backend.BatchCopy{{Dst: b, Src: a, N: 16}}, backend.Stream(0xdead))
	require.Error(t, err)
	assert.Equal(t, -1, idx, "a bad stream concerns no copy")

	idx, err = d.MemcpyBatchAsync(nil, s)
	require.NoError(t, err)
	assert.Equal(t, -1, idx)
	require.NoError(t, d.StreamSynchronize(s), "the device stays usable")
}
