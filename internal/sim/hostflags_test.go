package sim

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

func TestHostGetFlags(t *testing.T) {
	_, d0, _ := open(t)
	for _, flags := range []uint32{0, backend.HostAllocMapped, backend.HostAllocPortable | backend.HostAllocWriteCombined} {
		p, err := d0.HostAlloc(256, flags)
		require.NoError(t, err)
		got, err := d0.HostGetFlags(p)
		require.NoError(t, err)
		assert.Equal(t, flags, got)
		got, err = d0.HostGetFlags(unsafe.Add(p, 255))
		require.NoError(t, err, "a pointer inside the allocation")
		assert.Equal(t, flags, got)
		require.NoError(t, d0.HostFree(p))
		_, err = d0.HostGetFlags(p)
		requireCode(t, err, cudaerr.InvalidValue, "freed memory")
	}

	goMem := make([]byte, 4096)
	_, err := d0.HostGetFlags(unsafe.Pointer(&goMem[0]))
	requireCode(t, err, cudaerr.InvalidValue)
	require.NoError(t, d0.HostRegister(unsafe.Pointer(&goMem[0]), 4096, 0))
	_, err = d0.HostGetFlags(unsafe.Pointer(&goMem[0]))
	requireCode(t, err, cudaerr.InvalidValue, "registered memory has no HostAlloc flags")
	assert.Contains(t, err.Error(), "registered")
	require.NoError(t, d0.HostUnregister(unsafe.Pointer(&goMem[0])))
}
