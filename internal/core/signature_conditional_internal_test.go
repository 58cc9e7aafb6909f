package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
)

// A cudaGraphConditionalHandle parameter is a 64-bit unsigned value, which a
// cuda.ConditionalHandle argument packs as.
func TestConditionalHandleParameter(t *testing.T) {
	sigs := CUDASignatures(`extern "C" __global__ void loop(char *p, cudaGraphConditionalHandle handle) {}`)
	require.Len(t, sigs["loop"], 2)
	assert.Equal(t, cuda.Uint64, sigs["loop"][1].kind)

	var d Device
	arg, buf, _, err := d.packArg(&Kernel{name: "loop"}, 1, cuda.ConditionalHandle(0xfeed), nil)
	require.NoError(t, err)
	assert.Nil(t, buf)
	assert.Equal(t, cuda.Arg{Kind: cuda.Uint64, Bits: 0xfeed}, arg)
}
