package core

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gpuactor/gpuactor/cuda"
)

// Parameters known by their sizes alone accept any argument of that size, and name the size
// in errors; a size other than 4 or 8 leaves the signature unknown.
func TestSizedParams(t *testing.T) {
	ps := sizedParams([]uint64{4, 4, 8, 8})
	if assert.Len(t, ps, 4) {
		assert.True(t, ps[0].accepts(cuda.Int32))
		assert.True(t, ps[0].accepts(cuda.Float32))
		assert.True(t, ps[1].accepts(cuda.Uint32))
		assert.False(t, ps[1].accepts(cuda.Int64))
		assert.True(t, ps[2].accepts(cuda.Pointer))
		assert.True(t, ps[3].accepts(cuda.Float64))
		assert.False(t, ps[3].accepts(cuda.Float32))
		assert.Equal(t, "4-byte value", ps[0].String())
		assert.Equal(t, "8-byte value", ps[2].String())
	}
	assert.Nil(t, sizedParams([]uint64{4, 16}), "a struct by value: unknown")
	assert.NotNil(t, sizedParams([]uint64{}), "no parameters is known")
	assert.Empty(t, sizedParams([]uint64{}))
}
