package cudart

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// The descriptors' sizes and offsets as the C headers lay them out (CUDA 11.2–13.0, amd64 and
// arm64 alike: LP64, natural alignment).
func TestExternalDescriptorLayout(t *testing.T) {
	var m externalMemoryHandleDesc
	assert.EqualValues(t, 104, unsafe.Sizeof(m), "cudaExternalMemoryHandleDesc")
	assert.EqualValues(t, 0, unsafe.Offsetof(m.kind))
	assert.EqualValues(t, 8, unsafe.Offsetof(m.fd), "handle union")
	assert.EqualValues(t, 24, unsafe.Offsetof(m.size))
	assert.EqualValues(t, 32, unsafe.Offsetof(m.flags))
	assert.EqualValues(t, 36, unsafe.Offsetof(m.reserved))

	var b externalMemoryBufferDesc
	assert.EqualValues(t, 88, unsafe.Sizeof(b), "cudaExternalMemoryBufferDesc")
	assert.EqualValues(t, 0, unsafe.Offsetof(b.offset))
	assert.EqualValues(t, 8, unsafe.Offsetof(b.size))
	assert.EqualValues(t, 16, unsafe.Offsetof(b.flags))
	assert.EqualValues(t, 20, unsafe.Offsetof(b.reserved))

	var a externalMemoryMipmappedArrayDesc
	assert.EqualValues(t, 128, unsafe.Sizeof(a), "cudaExternalMemoryMipmappedArrayDesc")
	assert.EqualValues(t, 0, unsafe.Offsetof(a.offset))
	assert.EqualValues(t, 8, unsafe.Offsetof(a.format), "formatDesc")
	assert.EqualValues(t, 32, unsafe.Offsetof(a.extent))
	assert.EqualValues(t, 56, unsafe.Offsetof(a.flags))
	assert.EqualValues(t, 60, unsafe.Offsetof(a.numLevels))
	assert.EqualValues(t, 64, unsafe.Offsetof(a.reserved))

	var s externalSemaphoreHandleDesc
	assert.EqualValues(t, 96, unsafe.Sizeof(s), "cudaExternalSemaphoreHandleDesc")
	assert.EqualValues(t, 0, unsafe.Offsetof(s.kind))
	assert.EqualValues(t, 8, unsafe.Offsetof(s.fd), "handle union")
	assert.EqualValues(t, 24, unsafe.Offsetof(s.flags))
	assert.EqualValues(t, 28, unsafe.Offsetof(s.reserved))

	var p externalSemaphoreParams
	assert.EqualValues(t, 144, unsafe.Sizeof(p), "cudaExternalSemaphoreSignalParams / WaitParams")
	assert.EqualValues(t, 0, unsafe.Offsetof(p.fenceValue), "params.fence.value")
	assert.EqualValues(t, 8, unsafe.Offsetof(p.nvSciSync), "params.nvSciSync")
	assert.EqualValues(t, 16, unsafe.Offsetof(p.keyedMutex), "params.keyedMutex")
	assert.EqualValues(t, 72, unsafe.Offsetof(p.flags))
	assert.EqualValues(t, 76, unsafe.Offsetof(p.reserved2))
}

// Each runtime major exports the semaphore calls under the name whose signature gpuactor
// passes: the _v2 names before 13.0, the plain ones from 13.0.
func TestExternalSymbolsResolve(t *testing.T) {
	rt := mustLoad(t)
	ids := []int{fnImportExternalMemory, fnExternalMemoryGetMappedBuffer, fnDestroyExternalMemory,
		fnImportExternalSemaphore, fnDestroyExternalSemaphore, fnStreamGetFlags, fnStreamGetPriority}
	if rt.Major() >= 13 {
		ids = append(ids, fnSignalExternalSemaphoresAsync, fnWaitExternalSemaphoresAsync, fnStreamGetDevice)
	} else {
		ids = append(ids, fnSignalExternalSemaphoresAsyncV2, fnWaitExternalSemaphoresAsyncV2)
	}
	for _, id := range ids {
		_, err := rt.syms.get(id)
		assert.NoError(t, err, runtimeSymNames[id])
	}
}
