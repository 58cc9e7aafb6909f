package sim

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

func TestFuncAttributes(t *testing.T) {
	_, d0, _ := open(t)
	k := kernels(t, d0, map[string]backend.SimKernel{"nop": func(*backend.KernelCall) error { return nil }})["nop"]
	a, err := d0.FuncAttributes(k)
	require.NoError(t, err)
	assert.Equal(t, 1024, a.MaxThreadsPerBlock)
	assert.Equal(t, 48<<10, a.MaxDynamicSharedSizeBytes, "the per-block default until raised")
	assert.Equal(t, -1, a.PreferredSharedCarveout)
	assert.Equal(t, 90, a.BinaryVersion)

	require.NoError(t, d0.FuncSetAttribute(k, backend.FuncAttrMaxDynamicSharedMemorySize, 200<<10))
	require.NoError(t, d0.FuncSetAttribute(k, backend.FuncAttrPreferredSharedMemoryCarveout, 100))
	require.NoError(t, d0.FuncSetAttribute(k, backend.FuncAttrNonPortableClusterSizeAllowed, 1))
	require.NoError(t, d0.FuncSetAttribute(k, backend.FuncAttrClusterSchedulingPolicy, 1))
	require.NoError(t, d0.FuncSetCacheConfig(k, 1))
	a, err = d0.FuncAttributes(k)
	require.NoError(t, err)
	assert.Equal(t, 200<<10, a.MaxDynamicSharedSizeBytes)
	assert.Equal(t, 100, a.PreferredSharedCarveout)
	assert.True(t, a.NonPortableClusterSizeAllowed)
	assert.EqualValues(t, 1, a.ClusterScheduling)

	for _, c := range []struct {
		attr  backend.FuncAttr
		value int
	}{
		{backend.FuncAttrMaxDynamicSharedMemorySize, 227<<10 + 1},
		{backend.FuncAttrMaxDynamicSharedMemorySize, -1},
		{backend.FuncAttrPreferredSharedMemoryCarveout, 101},
		{backend.FuncAttrNonPortableClusterSizeAllowed, 2},
		{backend.FuncAttrClusterSchedulingPolicy, 3},
		{backend.FuncAttrRequiredClusterWidth, 17},
		{backend.FuncAttrClusterDimMustBeSet, 1},
		{99, 0},
	} {
		err := d0.FuncSetAttribute(k, c.attr, c.value)
		requireCode(t, err, cudaerr.InvalidValue, "attribute %d value %d", c.attr, c.value)
		assert.Contains(t, err.Error(), `kernel "nop"`)
	}
	requireCode(t, d0.FuncSetCacheConfig(k, 4), cudaerr.InvalidValue)
	a2, err := d0.FuncAttributes(k)
	require.NoError(t, err)
	assert.Equal(t, a, a2, "refused values change nothing")

	name, err := d0.FuncName(k)
	require.NoError(t, err)
	assert.Equal(t, "nop", name)
	_, err = d0.FuncParamSizes(k)
	requireCode(t, err, cudaerr.NotSupported)
	_, err = d0.FuncAttributes(0xbad)
	requireCode(t, err, cudaerr.InvalidDeviceFunction)
}

func TestLaunchExChecksItsAttributes(t *testing.T) {
	_, d0, _ := open(t)
	var runs atomic.Int32
	k := kernels(t, d0, map[string]backend.SimKernel{"count": func(*backend.KernelCall) error { runs.Add(1); return nil }})["count"]
	s := mkStream(t, d0)
	sms, err := d0.Attribute(backend.AttrMultiProcessorCount)
	require.NoError(t, err)
	perSM, err := d0.OccupancyMaxActiveBlocksPerSM(k, 256, 0, 0)
	require.NoError(t, err)
	block := dim(256, 1, 1)

	ok := []struct {
		name  string
		grid  backend.Dim3
		attrs backend.LaunchAttrs
	}{
		{"cooperative, exactly co-resident", dim(uint32(perSM*sms), 1, 1), backend.LaunchAttrs{Cooperative: true}},
		{"2x1x1 clusters", dim(8, 2, 1), backend.LaunchAttrs{Cluster: dim(2, 1, 1)}},
		{"8-block portable cluster", dim(4, 2, 2), backend.LaunchAttrs{Cluster: dim(2, 2, 2)}},
		{"priority, domain, serialization", dim(1, 1, 1), backend.LaunchAttrs{Priority: -2, MemSyncDomain: 1, ProgrammaticSerialization: true}},
	}
	for _, c := range ok {
		require.NoError(t, d0.LaunchEx(k, c.grid, block, 0, s, nil, c.attrs), c.name)
	}
	require.NoError(t, d0.StreamSynchronize(s))
	assert.EqualValues(t, len(ok), runs.Load())

	bad := []struct {
		name  string
		grid  backend.Dim3
		smem  uint32
		attrs backend.LaunchAttrs
		code  cudaerr.Code
		says  string
	}{
		{"cooperative grid too large", dim(uint32(perSM*sms+1), 1, 1), 0, backend.LaunchAttrs{Cooperative: true}, cudaerr.CooperativeLaunchTooLarge, "exceeds the"},
		{"cluster does not divide the grid", dim(3, 1, 1), 0, backend.LaunchAttrs{Cluster: dim(2, 1, 1)}, cudaerr.InvalidClusterSize, "does not divide"},
		{"cluster above the portable size", dim(16, 1, 1), 0, backend.LaunchAttrs{Cluster: dim(16, 1, 1)}, cudaerr.InvalidClusterSize, "more than the 8 allowed"},
		{"zero cluster extent", dim(16, 1, 1), 0, backend.LaunchAttrs{Cluster: dim(2, 0, 1)}, cudaerr.InvalidClusterSize, "zero extent"},
		{"memory sync domain", dim(1, 1, 1), 0, backend.LaunchAttrs{MemSyncDomain: 2}, cudaerr.InvalidValue, "domain 2"},
		{"shared memory above the kernel's limit", dim(1, 1, 1), 64 << 10, backend.LaunchAttrs{Priority: -1}, cudaerr.InvalidValue, "kernel's limit of 49152"},
	}
	for _, c := range bad {
		err := d0.LaunchEx(k, c.grid, block, c.smem, s, nil, c.attrs)
		requireCode(t, err, c.code, c.name)
		assert.Contains(t, err.Error(), c.says, c.name)
		assert.False(t, cudaerr.IsSticky(err), c.name)
	}

	// Non-portable clusters once the kernel allows them; the device stays usable throughout.
	require.NoError(t, d0.FuncSetAttribute(k, backend.FuncAttrNonPortableClusterSizeAllowed, 1))
	require.NoError(t, d0.LaunchEx(k, dim(16, 1, 1), block, 0, s, nil, backend.LaunchAttrs{Cluster: dim(16, 1, 1)}))
	require.NoError(t, d0.StreamSynchronize(s))
	assert.EqualValues(t, len(ok)+1, runs.Load())
}

func TestClusterOccupancy(t *testing.T) {
	_, d0, _ := open(t)
	k := kernels(t, d0, map[string]backend.SimKernel{"nop": func(*backend.KernelCall) error { return nil }})["nop"]
	block := dim(256, 1, 1)
	n, err := d0.OccupancyMaxPotentialClusterSize(k, dim(64, 1, 1), block, 0, backend.LaunchAttrs{})
	require.NoError(t, err)
	assert.Equal(t, 8, n)
	require.NoError(t, d0.FuncSetAttribute(k, backend.FuncAttrNonPortableClusterSizeAllowed, 1))
	n, err = d0.OccupancyMaxPotentialClusterSize(k, dim(64, 1, 1), block, 0, backend.LaunchAttrs{})
	require.NoError(t, err)
	assert.Equal(t, 16, n)

	perSM, err := d0.OccupancyMaxActiveBlocksPerSM(k, 256, 0, 0)
	require.NoError(t, err)
	sms, err := d0.Attribute(backend.AttrMultiProcessorCount)
	require.NoError(t, err)
	n, err = d0.OccupancyMaxActiveClusters(k, dim(64, 1, 1), block, 0, backend.LaunchAttrs{Cluster: dim(2, 1, 1)})
	require.NoError(t, err)
	assert.Equal(t, perSM*sms/2, n)
	_, err = d0.OccupancyMaxActiveClusters(k, dim(64, 1, 1), block, 0, backend.LaunchAttrs{})
	requireCode(t, err, cudaerr.InvalidClusterSize)

	avail, err := d0.OccupancyAvailableDynamicSMemPerBlock(k, 2, 256)
	require.NoError(t, err)
	assert.EqualValues(t, 228<<10/2-1<<10, avail, "half of the multiprocessor less what the driver reserves")
	avail, err = d0.OccupancyAvailableDynamicSMemPerBlock(k, 4, 256)
	require.NoError(t, err)
	assert.EqualValues(t, 228<<10/4-1<<10, avail)
	avail, err = d0.OccupancyAvailableDynamicSMemPerBlock(k, 9, 256)
	require.NoError(t, err)
	assert.Zero(t, avail, "9 blocks of 256 threads exceed the multiprocessor's 2048 threads")
	_, err = d0.OccupancyAvailableDynamicSMemPerBlock(k, 0, 256)
	requireCode(t, err, cudaerr.InvalidValue)

	// Raising the kernel's limit lets occupancy count blocks above 48 KiB.
	n, err = d0.OccupancyMaxActiveBlocksPerSM(k, 128, 100<<10, 0)
	require.NoError(t, err)
	assert.Zero(t, n)
	require.NoError(t, d0.FuncSetAttribute(k, backend.FuncAttrMaxDynamicSharedMemorySize, 200<<10))
	n, err = d0.OccupancyMaxActiveBlocksPerSM(k, 128, 100<<10, backend.OccupancyDisableCachingOverride)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
}

func dim(x, y, z uint32) backend.Dim3 { return backend.Dim3{X: x, Y: y, Z: z} }
