package core

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gpuactor/gpuactor/cuda"
)

func TestSignaturesKnowTextureAndSurfaceObjects(t *testing.T) {
	sigs := CUDASignatures(`extern "C" __global__ void k(cudaTextureObject_t tex, const cudaSurfaceObject_t surf, float* out, unsigned long long raw) {}`)
	ps := sigs["k"]
	assert.Len(t, ps, 4)
	kinds := make([]cuda.ArgKind, len(ps))
	for i, p := range ps {
		kinds[i] = p.kind
	}
	assert.Equal(t, []cuda.ArgKind{cuda.Texture, cuda.Surface, cuda.Pointer, cuda.Uint64}, kinds)
	assert.True(t, ps[0].accepts(cuda.Texture))
	assert.False(t, ps[0].accepts(cuda.Uint64), "a bare integer is not a texture object")
	assert.False(t, ps[0].accepts(cuda.Surface), "nor is a surface object")
	assert.False(t, ps[3].accepts(cuda.Texture), "nor is a texture object an integer")

	// From PTX only the width is known: a texture object passes where a .u64 is declared.
	ptx := PTXSignatures(".entry k(.param .u64 k_param_0, .param .f32 k_param_1)")
	assert.True(t, ptx["k"][0].accepts(cuda.Texture))
	assert.True(t, ptx["k"][0].accepts(cuda.Surface))
	assert.True(t, sizedParams([]uint64{8})[0].accepts(cuda.Texture))
}
