package cudart

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The structs passed by pointer must have the C layouts (binding-notes C.1, driver_types.h,
// cuda.h): a wrong offset would pass garbage to the runtime without any error.
func TestGraphStructLayouts(t *testing.T) {
	var k kernelNodeParams
	assert.Equal(t, uintptr(72), unsafe.Sizeof(k), "CUDA_KERNEL_NODE_PARAMS_v2")
	assert.Equal(t, uintptr(8), unsafe.Offsetof(k.grid))
	assert.Equal(t, uintptr(20), unsafe.Offsetof(k.block))
	assert.Equal(t, uintptr(32), unsafe.Offsetof(k.sharedMem))
	assert.Equal(t, uintptr(40), unsafe.Offsetof(k.kernelParams))
	assert.Equal(t, uintptr(48), unsafe.Offsetof(k.extra))
	assert.Equal(t, uintptr(56), unsafe.Offsetof(k.kern))
	assert.Equal(t, uintptr(64), unsafe.Offsetof(k.ctx))

	var m memAllocNodeParams
	assert.Equal(t, uintptr(120), unsafe.Sizeof(m), "cudaMemAllocNodeParams")
	assert.Equal(t, uintptr(8), unsafe.Offsetof(m.locType))
	assert.Equal(t, uintptr(24), unsafe.Offsetof(m.maxSize))
	assert.Equal(t, uintptr(32), unsafe.Offsetof(m.usage))
	assert.Equal(t, uintptr(88), unsafe.Offsetof(m.accessDescs))
	assert.Equal(t, uintptr(104), unsafe.Offsetof(m.bytesize))
	assert.Equal(t, uintptr(112), unsafe.Offsetof(m.dptr))

	var s memsetParams
	assert.Equal(t, uintptr(40), unsafe.Sizeof(s), "cudaMemsetParams")
	assert.Equal(t, uintptr(16), unsafe.Offsetof(s.value))
	assert.Equal(t, uintptr(20), unsafe.Offsetof(s.elementSize))
	assert.Equal(t, uintptr(24), unsafe.Offsetof(s.width))

	var u updateResultInfo
	assert.Equal(t, uintptr(24), unsafe.Sizeof(u), "cudaGraphExecUpdateResultInfo")
	assert.Equal(t, uintptr(8), unsafe.Offsetof(u.errorNode))
	assert.Equal(t, uintptr(16), unsafe.Sizeof(hostNodeParams{}), "cudaHostNodeParams")
}

func TestGraphHostFunctionsRunAtEveryLaunchUntilReleased(t *testing.T) {
	var tbl refTable
	runs := 0
	h := tbl.put(func() { runs++ })
	require.NotZero(t, h)
	tbl.run(h)
	tbl.run(h)
	assert.Equal(t, 2, runs, "a graph host function is not consumed by running")
	tbl.retain([]uintptr{h}) // a clone
	tbl.release([]uintptr{h})
	tbl.run(h)
	assert.Equal(t, 3, runs, "still held by the clone")
	tbl.release([]uintptr{h})
	tbl.run(h)
	assert.Equal(t, 3, runs, "released: gone")
	assert.Equal(t, 0, tbl.pending())
	tbl.release([]uintptr{h, 0, 99}) // unknown handles are ignored
	h2 := tbl.put(func() {})
	assert.Equal(t, h, h2, "slots are reused")

	// The shared trampoline tells graph handles from one-shot ones by graphHostBit.
	got := 0
	gh := graphHosts.put(func() { got++ })
	defer graphHosts.release([]uintptr{gh})
	hostFuncDispatch(gh | graphHostBit)
	hostFuncDispatch(gh | graphHostBit)
	assert.Equal(t, 2, got)
	once := hostFuncs.put(func() { got += 10 })
	hostFuncDispatch(once)
	hostFuncDispatch(once)
	assert.Equal(t, 12, got, "one-shot host functions still run once")
}
