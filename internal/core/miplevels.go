package core

import (
	"math/bits"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// MipLevels is how many levels cudaMallocMipmappedArray makes when asked for levels with
// level 0 of extent e: it clamps the count to 1 to 1+floor(log2) of the largest extent (the
// layers of a layered or cubemap array not counting), so a mipmap never goes below 1×1.
func MipLevels(e backend.Extent3D, flags, levels uint32) uint32 {
	m := max(e.Width, e.Height)
	if flags&(backend.ArrayLayered|backend.ArrayCubemap) == 0 {
		m = max(m, e.Depth)
	}
	return min(max(levels, 1), uint32(max(bits.Len64(m), 1)))
}
