package sim

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/backend"
)

func TestNarrowFloatConversions(t *testing.T) {
	for h := range uint32(1 << 16) {
		f := halfToFloat(uint16(h))
		if f != f {
			continue
		}
		require.Equal(t, uint16(h), floatToHalf(f), "half %#04x", h)
		require.Equal(t, uint16(h), floatToBF16(bf16ToFloat(uint16(h))), "bf16 %#04x", h)
	}
	for h := range uint16(256) {
		if f := e4m3ToFloat(h); f == f {
			require.Equal(t, h, floatToE4M3(f), "e4m3 %#02x", h)
		}
		if f := e5m2ToFloat(h); f == f && !math.IsInf(float64(f), 0) {
			require.Equal(t, h, floatToE5M2(f), "e5m2 %#02x", h)
		}
	}
	assert.Equal(t, float32(448), e4m3ToFloat(floatToE4M3(1000)), "E4M3 saturates")
	assert.Equal(t, float32(57344), e5m2ToFloat(floatToE5M2(1e6)), "E5M2 saturates")
	assert.Equal(t, uint16(0x3c00), floatToHalf(1+1.0/4096), "ties to even")
	assert.Equal(t, uint16(0x7c00), floatToHalf(70000), "half overflows to infinity")
	assert.Equal(t, uint16(0x0001), floatToHalf(float32(math.Ldexp(1, -24))), "smallest subnormal")
}

func TestCollMaxMinDropNaN(t *testing.T) {
	nan := float32(math.NaN())
	parts := [][]byte{elemBytes([]float32{nan, 1, nan}), elemBytes([]float32{2, nan, nan})}
	assert.Equal(t, []float32{2, 1}, elems[float32](reduceParts(backend.CollFloat32, backend.CollMax, parts))[:2])
	assert.Equal(t, []float32{2, 1}, elems[float32](reduceParts(backend.CollFloat32, backend.CollMin, parts))[:2])
	assert.True(t, math.IsNaN(float64(elems[float32](reduceParts(backend.CollFloat32, backend.CollMax, parts))[2])), "NaN only where every input is")
	half := func(v float32) []byte { h := floatToHalf(v); return []byte{byte(h), byte(h >> 8)} }
	got := reduceParts(backend.CollFloat16, backend.CollMax, [][]byte{half(nan), half(3)})
	assert.Equal(t, half(3), got)
}
