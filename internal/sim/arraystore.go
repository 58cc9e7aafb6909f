package sim

import (
	"sync"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// simArray is a simulated CUDA array. Its elements are stored densely, x fastest, then y,
// then z, where z is the slice of a 3D array, the layer of a layered one, or the face
// (layer*6+face) of a cubemap: the layout a real array hides, so users see it only through
// copies, textures and surfaces.
type simArray struct {
	format cuda.ChannelFormat
	// width, height, depth are as cudaExtent gives them: height is 0 for a 1D array and depth
	// 0 for a 2D one; for layered arrays depth counts the layers, for cubemaps 6 per layer.
	width, height, depth uint64
	flags                uint32
	data                 []byte
	// addr is the device allocation that backs data (charged against the device's memory);
	// mip is the mipmapped array the array is a level of, freed only with it.
	addr uint64
	mip  backend.MipmappedArray
}

// elemSize is the bytes of one element.
func (a *simArray) elemSize() uint64 { return a.format.Size() }

// dims are the array's extents with the unused ones as 1.
func (a *simArray) dims() (w, h, d uint64) {
	w, h, d = a.width, a.height, a.depth
	if h == 0 {
		h = 1
	}
	if d == 0 {
		d = 1
	}
	return w, h, d
}

// texel is the element at x, y, z, sharing the array's storage (writes land in the array),
// or nil when the coordinates are outside it.
func (a *simArray) texel(x, y, z int64) []byte {
	w, h, d := a.dims()
	if x < 0 || y < 0 || z < 0 || uint64(x) >= w || uint64(y) >= h || uint64(z) >= d {
		return nil
	}
	es := a.elemSize()
	off := ((uint64(z)*h+uint64(y))*w + uint64(x)) * es
	return a.data[off : off+es : off+es]
}

// simMipmapped is a simulated mipmapped array: level 0 first, each level half the one before
// it in every used extent (never below 1).
type simMipmapped struct {
	levels  []*simArray
	handles []backend.Array // the levels' handles, as MipmappedArrayLevel gives them
	format  cuda.ChannelFormat
	extent  backend.Extent3D // level 0's
	flags   uint32
}

// arrayState holds a device's CUDA arrays and mipmapped arrays by handle.
type arrayState struct {
	mu      sync.Mutex
	arrays  map[backend.Array]*simArray
	mipmaps map[backend.MipmappedArray]*simMipmapped
}

// lookupArray is the array a handle names, or nil when it names none (never made, or freed).
func (d *device) lookupArray(h backend.Array) *simArray {
	d.arrays.mu.Lock()
	defer d.arrays.mu.Unlock()
	return d.arrays.arrays[h]
}

// lookupMipmapped is the mipmapped array a handle names, or nil.
func (d *device) lookupMipmapped(h backend.MipmappedArray) *simMipmapped {
	d.arrays.mu.Lock()
	defer d.arrays.mu.Unlock()
	return d.arrays.mipmaps[h]
}
