package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// The values are those an H200 returned for a point-filtered fetch outside a bordered texture.
func TestPointBorderIsQuantizedToTheFormat(t *testing.T) {
	desc := backend.TextureDesc{AddressX: backend.AddressBorder, Read: backend.ReadNormalizedFloat,
		BorderR: 0.5, BorderG: 0.25, BorderB: 0.75, BorderA: 1}
	at := func(d backend.TextureDesc, f cuda.ChannelFormat) [4]float64 {
		return sampler{tex: &simTexture{tex: d}}.pointBorder(f)
	}
	rgba8 := cuda.Channels[uint8](4)
	assert.Equal(t, [4]float64{127.0 / 255, 64.0 / 255, 191.0 / 255, 1}, at(desc, rgba8), "halves round down")
	assert.Equal(t, [4]float64{16383.0 / 32767}, at(desc, cuda.Channels[int16](1)))

	neg := desc
	neg.BorderR = -2
	assert.Equal(t, [4]float64{-1}, at(neg, cuda.Channels[int8](1)), "clamped to [-1, 1]")
	assert.Equal(t, [4]float64{0}, at(neg, cuda.Channels[uint8](1)), "clamped to [0, 1]")

	srgb := desc
	srgb.SRGB = 1
	got := at(srgb, rgba8)
	assert.InDelta(t, 0.50390625, got[0], 2e-3)
	assert.InDelta(t, 0.25, got[1], 2e-3)
	assert.InDelta(t, 0.75390625, got[2], 2e-3)
	assert.Equal(t, 1.0, got[3], "alpha is not encoded")
	assert.NotEqual(t, 127.0/255, got[0], "encoded to sRGB, not quantized linearly")

	float := at(desc, cuda.Channels[float32](4))
	assert.Equal(t, [4]float64{0.5, 0.25, 0.75, 1}, float, "a float format keeps the colour")
	elem := desc
	elem.Read = backend.ReadElementType
	assert.Equal(t, sampler{tex: &simTexture{tex: elem}}.border(rgba8), at(elem, rgba8), "element reads take the colour's bits")
}
