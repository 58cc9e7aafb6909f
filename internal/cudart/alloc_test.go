package cudart

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// The structs passed by pointer must have the C layouts (binding-notes C.1).
func TestAllocStructLayouts(t *testing.T) {
	var props memPoolProps
	assert.Equal(t, uintptr(88), unsafe.Sizeof(props))
	assert.Equal(t, uintptr(8), unsafe.Offsetof(props.locType))
	assert.Equal(t, uintptr(16), unsafe.Offsetof(props.win32))
	assert.Equal(t, uintptr(24), unsafe.Offsetof(props.maxSize))
	assert.Equal(t, uintptr(32), unsafe.Offsetof(props.usage))
	assert.Equal(t, uintptr(12), unsafe.Sizeof(memAccessDesc{}))
	var pa pointerAttributes
	assert.Equal(t, uintptr(88), unsafe.Sizeof(pa))
	assert.Equal(t, uintptr(8), unsafe.Offsetof(pa.devicePointer))
	assert.Equal(t, uintptr(16), unsafe.Offsetof(pa.hostPointer))
}

// A cudaMemLocation by value is one register: type in the low half, id in the high half.
func TestLocationWords(t *testing.T) {
	assert.Equal(t, uintptr(0x0000_0003_0000_0001), locationWord(backend.Location{Type: backend.LocationDevice, ID: 3}))
	assert.Equal(t, uintptr(2), locationWord(backend.Location{Type: backend.LocationHost}))
	assert.Equal(t, ^uintptr(0), legacyDevice(backend.Location{Type: backend.LocationHost}))
	assert.Equal(t, uintptr(1), legacyDevice(backend.Location{Type: backend.LocationDevice, ID: 1}))
}
