package cudart

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// The node parameter struct is laid out as struct cudaExternalSemaphoreSignalNodeParams and
// cudaExternalSemaphoreWaitNodeParams are in the 11.4 to 13.0 headers.
func TestExtSemNodeParamsLayout(t *testing.T) {
	var p extSemNodeParams
	assert.EqualValues(t, 24, unsafe.Sizeof(p))
	assert.EqualValues(t, 0, unsafe.Offsetof(p.sems), "extSemArray")
	assert.EqualValues(t, 8, unsafe.Offsetof(p.params), "paramsArray")
	assert.EqualValues(t, 16, unsafe.Offsetof(p.n), "numExtSems")
}

// Packing a list and reading it back gives the list: handles and fence values in order, each
// value in the first word of its 144-byte parameters.
func TestExtSemNodeRoundTrip(t *testing.T) {
	ops := []backend.SemaphoreOp{{Sem: 0x1000, Value: 7}, {Sem: 0x2000, Value: 1 << 40}}
	p := extSemNode(ops)
	assert.EqualValues(t, 2, p.n)
	raw := unsafe.Slice((*byte)(p.params), 2*144)
	assert.Equal(t, byte(7), raw[0])
	assert.Equal(t, byte(1), raw[144+5], "the second value starts 144 bytes in")
	assert.Equal(t, ops, p.ops())
	assert.Nil(t, extSemNode(nil).ops())
}
