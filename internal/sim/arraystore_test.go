package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

func TestSimArrayTexelsAreXFastestAndBounded(t *testing.T) {
	a := &simArray{format: cuda.Channels[uint16](2), width: 3, height: 2, flags: 0}
	a.data = make([]byte, 3*2*a.elemSize())
	for i := range a.data {
		a.data[i] = byte(i)
	}
	assert.Equal(t, []byte{0, 1, 2, 3}, a.texel(0, 0, 0))
	assert.Equal(t, []byte{4, 5, 6, 7}, a.texel(1, 0, 0))
	assert.Equal(t, []byte{12, 13, 14, 15}, a.texel(0, 1, 0))
	assert.Nil(t, a.texel(3, 0, 0))
	assert.Nil(t, a.texel(0, 2, 0))
	assert.Nil(t, a.texel(0, 0, 1))
	assert.Nil(t, a.texel(-1, 0, 0))

	d := &device{}
	d.arrays.arrays = map[backend.Array]*simArray{1: a}
	d.arrays.mipmaps = map[backend.MipmappedArray]*simMipmapped{2: {levels: []*simArray{a}}}
	assert.Same(t, a, d.lookupArray(1))
	assert.Nil(t, d.lookupArray(2))
	assert.Same(t, a, d.lookupMipmapped(2).levels[0])
}
