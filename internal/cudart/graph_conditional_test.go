package cudart

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// The generic node structs must match CUDA 13.0's driver_types.h byte for byte.
func TestGraphNodeParamsLayout(t *testing.T) {
	var p graphNodeParams
	assert.EqualValues(t, 256, unsafe.Sizeof(p), "sizeof(cudaGraphNodeParams)")
	assert.EqualValues(t, 16, unsafe.Offsetof(p.union), "the union follows type and reserved0[3]")
	assert.EqualValues(t, 248, unsafe.Offsetof(p.reserved2))

	var m memsetParamsV2
	assert.EqualValues(t, 40, unsafe.Sizeof(m), "sizeof(cudaMemsetParamsV2)")
	assert.EqualValues(t, 16, unsafe.Offsetof(m.value))
	assert.EqualValues(t, 20, unsafe.Offsetof(m.elementSize))
	assert.EqualValues(t, 24, unsafe.Offsetof(m.width))
	assert.EqualValues(t, 32, unsafe.Offsetof(m.height))

	var c conditionalParams
	assert.EqualValues(t, 24, unsafe.Sizeof(c), "sizeof(cudaConditionalNodeParams)")
	assert.EqualValues(t, 8, unsafe.Offsetof(c.typ))
	assert.EqualValues(t, 12, unsafe.Offsetof(c.size))
	assert.EqualValues(t, 16, unsafe.Offsetof(c.phGraphOut))

	var k kernelNodeParams
	assert.EqualValues(t, 40, unsafe.Offsetof(k.kernelParams), "cudaKernelNodeParamsV2.kernelParams")
	assert.EqualValues(t, kernelParamsV2Size, unsafe.Offsetof(k.kern), "cudaKernelNodeParamsV2 ends before kern")
}

func TestNodeParamsPacking(t *testing.T) {
	prm, _ := nodeParams(Kernel{}, backend.NodeParams{Type: backend.NodeConditional,
		Conditional: backend.ConditionalNode{Handle: 0xabc, Type: backend.CondSwitch, Size: 4}})
	assert.EqualValues(t, backend.NodeConditional, prm.typ)
	assert.EqualValues(t, 0xabc, prm.union[0])
	assert.EqualValues(t, uint64(backend.CondSwitch)|4<<32, prm.union[1])
	assert.Zero(t, prm.union[2], "phGraph_out is the runtime's to fill")

	prm, _ = nodeParams(Kernel{}, backend.NodeParams{Type: backend.NodeMemset,
		Memset: backend.MemsetNode{Dst: 0x1000, Value: 0x7f, ElementSize: 1, Width: 96, Height: 1}})
	require.EqualValues(t, backend.NodeMemset, prm.typ)
	assert.EqualValues(t, []uint64{0x1000, 0, 0x7f | 1<<32, 96, 1}, prm.union[:5])

	prm, keep := nodeParams(Kernel{Handle: 0x5000, Func: 0x6000}, backend.NodeParams{Type: backend.NodeKernel,
		Kernel: backend.KernelNode{Grid: backend.Dim3{X: 2, Y: 1, Z: 1}, Block: backend.Dim3{X: 32, Y: 1, Z: 1}, SharedMem: 64,
			Args: []backend.Arg{{Kind: backend.ArgKind(4), Bits: 7}}}})
	require.NotNil(t, keep)
	assert.EqualValues(t, 0x5000, prm.union[0], "the generic call names the kernel by its cudaKernel_t")
	assert.EqualValues(t, 2|1<<32, prm.union[1])
	assert.NotZero(t, prm.union[5], "kernelParams points at the packed arguments")
}
