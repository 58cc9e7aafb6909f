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

// ArrayExtent checks an array's extent in elements as a caller gave it (the width positive,
// the height and depth not negative) and converts it to the runtime's. A depth without a
// height is a layered 1D array's; the runtime refuses it on others.
func ArrayExtent(op string, w, h, d int) (backend.Extent3D, error) {
	if w <= 0 || h < 0 || d < 0 {
		return backend.Extent3D{}, Invalid("%s of extent %d×%d×%d: the width must be positive and no extent negative", op, w, h, d)
	}
	return backend.Extent3D{Width: uint64(w), Height: uint64(h), Depth: uint64(d)}, nil
}

// MipShape checks a mipmapped array's level-0 extent and level count as a caller gave them
// (levels 1 to 64; MipLevels clamps them to what the extent has) and converts the extent.
func MipShape(op string, w, h, d, levels int) (backend.Extent3D, error) {
	e, err := ArrayExtent(op, w, h, d)
	if err != nil {
		return e, err
	}
	if levels <= 0 || levels > 64 {
		return e, Invalid("%s of %d levels: 1 to 1+log2 of the largest extent", op, levels)
	}
	return e, nil
}
