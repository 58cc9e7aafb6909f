package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

func TestOccupancyFollowsTheDeviceLimits(t *testing.T) {
	_, d0, d1 := open(t)
	k := kernels(t, d0, map[string]backend.SimKernel{"nop": func(*backend.KernelCall) error { return nil }})["nop"]
	attr := func(a backend.Attr) int {
		v, err := d0.Attribute(a)
		require.NoError(t, err)
		return v
	}
	threadsPerSM, blocksPerSM, smemPerSM := attr(backend.AttrMaxThreadsPerMultiProcessor), attr(backend.AttrMaxBlocksPerMultiprocessor), attr(backend.AttrMaxSharedMemoryPerSM)
	reserved := attr(backend.AttrReservedSharedMemoryPerBlock)
	for _, c := range []struct {
		name      string
		blockSize int
		shared    uint64
		want      int
	}{
		{"threads bound", 256, 0, threadsPerSM / 256},
		{"a partial warp takes a whole one", 250, 0, threadsPerSM / 256},
		{"blocks bound", 32, 0, blocksPerSM},
		{"one thread a block", 1, 0, blocksPerSM},
		{"shared memory bound, with what the driver reserves per block", 128, 40 << 10, smemPerSM / (40<<10 + reserved)},
		{"a kernel's default limit", 128, uint64(attr(backend.AttrMaxSharedMemoryPerBlock)), smemPerSM / (attr(backend.AttrMaxSharedMemoryPerBlock) + reserved)},
		{"whole block", 1024, 0, threadsPerSM / 1024},
		{"too many threads", attr(backend.AttrMaxThreadsPerBlock) + 1, 0, 0},
		{"more shared memory than a kernel may use unraised", 32, uint64(attr(backend.AttrMaxSharedMemoryPerBlock)) + 1, 0},
	} {
		n, err := d0.OccupancyMaxActiveBlocksPerSM(k, c.blockSize, c.shared, backend.OccupancyDefault)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, n, c.name)
	}

	_, err := d0.OccupancyMaxActiveBlocksPerSM(k, 0, 0, 0)
	require.ErrorIs(t, err, cudaerr.InvalidValue)
	_, err = d0.OccupancyMaxActiveBlocksPerSM(k, -5, 0, 0)
	require.ErrorIs(t, err, cudaerr.InvalidValue)
	_, err = d0.OccupancyMaxActiveBlocksPerSM(0xbad, 128, 0, 0)
	require.ErrorIs(t, err, cudaerr.InvalidDeviceFunction)
	// Kernel handles are the backend's: another device answers for it too.
	n, err := d1.OccupancyMaxActiveBlocksPerSM(k, 128, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, threadsPerSM/128, n)
}
