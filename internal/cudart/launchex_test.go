package cudart

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// The structures cuLaunchKernelEx and cudaLaunchKernelExC read must match the 13.0 headers'
// layouts byte for byte.
func TestLaunchStructLayouts(t *testing.T) {
	assert.EqualValues(t, 56, unsafe.Sizeof(cuLaunchConfig{}))
	assert.EqualValues(t, 56, unsafe.Sizeof(rtLaunchConfig{}))
	assert.EqualValues(t, 72, unsafe.Sizeof(launchAttr{}))
	assert.EqualValues(t, 32, unsafe.Offsetof(cuLaunchConfig{}.stream))
	assert.EqualValues(t, 48, unsafe.Offsetof(cuLaunchConfig{}.numAttrs))
	assert.EqualValues(t, 24, unsafe.Offsetof(rtLaunchConfig{}.sharedMem))
	assert.EqualValues(t, 48, unsafe.Offsetof(rtLaunchConfig{}.numAttrs))
	assert.EqualValues(t, 8, unsafe.Offsetof(launchAttr{}.val))
	assert.EqualValues(t, 144, unsafe.Sizeof(rtFuncAttributes{})) // 3 size_t, 13 int, 16 reserved int, padded to 8
}

func TestLaunchFrameAttributes(t *testing.T) {
	f := getLaunchFrame() // on the heap, as LaunchKernelEx has it: the attribute pointer must not move
	defer putLaunchFrame(f)
	f.set(Dim3{X: 8, Y: 2, Z: 1}, Dim3{X: 128, Y: 1, Z: 1}, 1024, Stream(0x1234), backend.LaunchAttrs{
		Cooperative: true, Cluster: Dim3{X: 2, Y: 1, Z: 1}, Priority: -3, MemSyncDomain: 1, ProgrammaticSerialization: true,
	})
	assert.EqualValues(t, 5, f.n)
	assert.Equal(t, f.drv.numAttrs, f.n)
	assert.Equal(t, uintptr(unsafe.Pointer(&f.attrs[0])), f.drv.attrs)
	assert.Equal(t, f.drv.attrs, f.rt.attrs)
	assert.Equal(t, [3]uint32{8, 2, 1}, f.drv.grid)
	assert.EqualValues(t, 1024, f.rt.sharedMem)
	assert.EqualValues(t, 0x1234, f.drv.stream)
	assert.Equal(t, launchAttr{id: launchAttrCooperative, val: [8]uint64{1}}, f.attrs[0])
	assert.Equal(t, launchAttr{id: launchAttrClusterDimension, val: [8]uint64{2 | 1<<32, 1}}, f.attrs[1])
	assert.Equal(t, launchAttr{id: launchAttrProgrammaticSerialization, val: [8]uint64{1}}, f.attrs[2])
	assert.Equal(t, launchAttr{id: launchAttrPriority, val: [8]uint64{uint64(uint32(0xFFFFFFFD))}}, f.attrs[3])
	assert.Equal(t, launchAttr{id: launchAttrMemSyncDomain, val: [8]uint64{1}}, f.attrs[4])

	f.set(Dim3{X: 1, Y: 1, Z: 1}, Dim3{X: 1, Y: 1, Z: 1}, 0, 0, backend.LaunchAttrs{ProgrammaticEvent: 0xabc0})
	assert.EqualValues(t, 1, f.n)
	assert.Equal(t, launchAttr{id: launchAttrProgrammaticEvent, val: [8]uint64{0xabc0}}, f.attrs[0], "event, flags 0, trigger when every block has")

	f.set(Dim3{X: 1, Y: 1, Z: 1}, Dim3{X: 1, Y: 1, Z: 1}, 0, 0, backend.LaunchAttrs{})
	assert.Zero(t, f.n)
	assert.Zero(t, f.drv.attrs)
}
