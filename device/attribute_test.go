package device_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
)

// The constants carry CUDA 13.0's values, spot-checked at both ends and across the gaps the
// reserved values leave, and every one has its runtime name.
func TestAttributeConstants(t *testing.T) {
	for a, want := range map[device.Attribute]int32{
		device.AttrMaxThreadsPerBlock:                   1,
		device.AttrMaxTexture1DLayeredLayers:            43,
		device.AttrMaxTexture2DGatherWidth:              45,
		device.AttrMultiProcessorCount:                  16,
		device.AttrCanUseHostPointerForRegisteredMem:    91,
		device.AttrCooperativeLaunch:                    95,
		device.AttrMaxSharedMemoryPerBlockOptin:         97,
		device.AttrMaxBlocksPerMultiprocessor:           106,
		device.AttrMaxPersistingL2CacheSize:             108,
		device.AttrClusterLaunch:                        120,
		device.AttrIPCEventSupport:                      125,
		device.AttrMPSEnabled:                           133,
		device.AttrVulkanCIGSupported:                   138,
		device.AttrGPUPCIDeviceID:                       139,
		device.AttrHostMemoryPoolsSupported:             144,
		device.AttrOnlyPartialHostNativeAtomicSupported: 147,
	} {
		assert.Equal(t, want, int32(a), a.String())
	}
	all := device.Attributes()
	require.NotEmpty(t, all)
	assert.Equal(t, device.AttrMaxThreadsPerBlock, all[0])
	assert.Equal(t, device.AttrOnlyPartialHostNativeAtomicSupported, all[len(all)-1])
	for i, a := range all {
		assert.True(t, a.Known())
		assert.Regexp(t, `^cudaDevAttr[A-Z][A-Za-z0-9]+$`, a.String())
		if i > 0 {
			assert.Less(t, all[i-1], a)
		}
	}
	assert.Equal(t, "cudaDevAttrGpuPciDeviceId", device.AttrGPUPCIDeviceID.String())
	for _, reserved := range []device.Attribute{0, 44, 92, 96, 122, 145, 146, 148} {
		assert.False(t, reserved.Known(), "%d", int32(reserved))
		assert.Equal(t, fmt.Sprintf("cudaDeviceAttr(%d)", int32(reserved)), reserved.String())
	}
}

// Choose's ranking: the most requirements met, then the nearest compute capability, then the
// lowest ordinal.
func TestChooseRanking(t *testing.T) {
	cc := func(major, minor int) device.ComputeCapability {
		return device.ComputeCapability{Major: major, Minor: minor}
	}
	devs := []device.Properties{
		{Ordinal: 0, ComputeCapability: cc(7, 0), TotalMemory: 32 << 30, Name: "V100"},
		{Ordinal: 1, ComputeCapability: cc(9, 0), TotalMemory: 80 << 30, Name: "H100", CooperativeLaunch: true},
		{Ordinal: 2, ComputeCapability: cc(8, 6), TotalMemory: 24 << 30, Name: "A10", CooperativeLaunch: true},
	}
	assert.Equal(t, 1, device.BestMatchForTest(devs, device.Properties{}), "nothing asked: the highest capability")
	assert.Equal(t, 2, device.BestMatchForTest(devs, device.Properties{ComputeCapability: cc(8, 0)}), "the nearest at or above 8.0")
	assert.Equal(t, 1, device.BestMatchForTest(devs, device.Properties{ComputeCapability: cc(8, 0), TotalMemory: 40 << 30}))
	assert.Equal(t, 0, device.BestMatchForTest(devs, device.Properties{Name: "v100"}), "names match ignoring case")
	assert.Equal(t, 0, device.BestMatchForTest(devs, device.Properties{ComputeCapability: cc(7, 0), TotalMemory: 16 << 30}))
	assert.Equal(t, 1, device.BestMatchForTest(devs, device.Properties{TotalMemory: 1 << 40, CooperativeLaunch: true}),
		"none meets every requirement: the one that meets most, then the highest capability")
}
