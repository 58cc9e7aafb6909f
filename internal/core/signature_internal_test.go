package core

import (
	"testing"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func kinds(ps []param) []ArgKind {
	if ps == nil {
		return nil
	}
	out := make([]ArgKind, len(ps))
	for i, p := range ps {
		out[i] = p.kind
	}
	return out
}

func TestCUDASignatures(t *testing.T) {
	src := `
// __global__ void commented_out(int x) {}
extern "C" __global__ void a(int n, const float* __restrict__ x, double d, unsigned int u, size_t s, long long ll) {}
extern "C" __global__ void __launch_bounds__(256) b(void) {}
extern "C" __global__ void c(float2 v) {}
extern "C" __global__ void d(int* const p, unsigned long long q, int64_t r, uint32_t s) {}
/* extern "C" __global__ void e(int) {} */
template <typename T> __global__ void f(T* p) {}
`
	sigs := CUDASignatures(src)
	assert.Equal(t, []ArgKind{cuda.Int32, cuda.Pointer, cuda.Float64, cuda.Uint32, cuda.Uint64, cuda.Int64}, kinds(sigs["a"]))
	require.Contains(t, sigs, "b")
	assert.Empty(t, sigs["b"])
	assert.NotNil(t, sigs["b"], "a kernel with no parameters is known, not unchecked")
	require.Contains(t, sigs, "c")
	assert.Nil(t, sigs["c"], "a struct parameter leaves the kernel unchecked")
	assert.Equal(t, []ArgKind{cuda.Pointer, cuda.Uint64, cuda.Int64, cuda.Uint32}, kinds(sigs["d"]))
	assert.NotContains(t, sigs, "commented_out")
	assert.NotContains(t, sigs, "e")
	assert.Equal(t, []ArgKind{cuda.Pointer}, kinds(sigs["f"]))
}

func TestPTXSignatures(t *testing.T) {
	ptx := `
.visible .entry saxpy(
	.param .u32 saxpy_param_0,
	.param .f32 saxpy_param_1,
	.param .u64 .ptr .align 1 saxpy_param_2,
	.param .u64 saxpy_param_3
)
{ ret; }
.visible .entry none()
{ ret; }
.visible .entry agg(
	.param .align 8 .b8 agg_param_0[16]
)
{ ret; }
`
	sigs := PTXSignatures(ptx)
	ps := sigs["saxpy"]
	require.Len(t, ps, 4)
	assert.True(t, ps[0].accepts(cuda.Int32))
	assert.True(t, ps[0].accepts(cuda.Uint32))
	assert.False(t, ps[0].accepts(cuda.Float32))
	assert.True(t, ps[1].accepts(cuda.Float32))
	assert.False(t, ps[1].accepts(cuda.Int32))
	assert.True(t, ps[2].accepts(cuda.Pointer))
	assert.True(t, ps[2].accepts(cuda.Uint64))
	assert.False(t, ps[2].accepts(cuda.Float64))
	require.Contains(t, sigs, "none")
	assert.Empty(t, sigs["none"])
	require.Contains(t, sigs, "agg")
	assert.Nil(t, sigs["agg"])
}
