package sim

import (
	"math/bits"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Array extent limits, as an H100 reports them (cudaDevAttrMaxTexture*): the runtime refuses
// an array past them with cudaErrorInvalidValue.
const (
	maxArray1D        = 131072
	maxArray2DWidth   = 131072
	maxArray2DHeight  = 65536
	maxArray3D        = 16384
	maxArrayLayered   = 32768 // width and height of a layered array
	maxArrayLayers    = 2048
	maxArrayCubemap   = 32768
	maxCubemapLayered = 2046 // faces of a layered cubemap (layers×6)
)

// arrayShape checks an array's extent and flags the way cudaMalloc3DArray does and returns
// the reason it refuses them, or "".
func arrayShape(e backend.Extent3D, flags uint32) string {
	w, h, d := e.Width, e.Height, e.Depth
	layered, cube := flags&backend.ArrayLayered != 0, flags&backend.ArrayCubemap != 0
	switch {
	case flags&^backend.ArrayFlagsKnown != 0:
		return "unknown array flags"
	case w == 0:
		return "the width is 0"
	case h == 0 && d != 0 && !layered:
		return "a depth without a height: only a layered 1D array has one"
	case layered && d == 0:
		return "the layered flag needs a depth, the number of layers"
	case cube && (w != h || (!layered && d != 6) || (layered && d%6 != 0)):
		return "a cubemap needs width == height and a depth of 6 (6 per layer when layered)"
	case flags&backend.ArrayTextureGather != 0 && (h == 0 || d != 0):
		return "texture gather is for 2D arrays only"
	case flags&backend.ArraySparse != 0 && (h == 0 || cube):
		return "sparse arrays are 2D, 3D or 2D layered"
	case cube && layered && (w > maxArrayCubemap || d > maxCubemapLayered):
		return "past the device's layered cubemap limits"
	case cube && w > maxArrayCubemap:
		return "past the device's cubemap limit"
	case layered && (w > maxArrayLayered || h > maxArrayLayered || d > maxArrayLayers):
		return "past the device's layered array limits"
	case !layered && !cube && d != 0 && (w > maxArray3D || h > maxArray3D || d > maxArray3D):
		return "past the device's 3D array limit"
	case !layered && d == 0 && h != 0 && (w > maxArray2DWidth || h > maxArray2DHeight):
		return "past the device's 2D array limits"
	case !layered && h == 0 && w > maxArray1D:
		return "past the device's 1D array limit"
	}
	return ""
}

// arrayBytes is the bytes of an array of extent e with elements of es bytes, and whether
// they fit a uint64.
func arrayBytes(e backend.Extent3D, es uint64) (uint64, bool) {
	n := es
	for _, x := range []uint64{e.Width, max(e.Height, 1), max(e.Depth, 1)} {
		hi, lo := bits.Mul64(n, x)
		if hi != 0 {
			return 0, false
		}
		n = lo
	}
	return n, true
}

// newArray makes one array's storage, charged against the device's memory, and registers
// it under a fresh handle.
func (d *device) newArray(op string, f backend.ChannelFormat, e backend.Extent3D, flags uint32, mip backend.MipmappedArray) (backend.Array, *simArray, error) {
	n, ok := arrayBytes(e, f.Size())
	if !ok {
		return 0, nil, d.fail(op, cudaerr.InvalidValue, "an array of %d×%d×%d %s elements overflows", e.Width, e.Height, e.Depth, f)
	}
	a, detail := d.mem.alloc(max(n, 1))
	if a == nil {
		return 0, nil, d.fail(op, cudaerr.MemoryAllocation, "%s", detail)
	}
	arr := &simArray{format: f, width: e.Width, height: e.Height, depth: e.Depth, flags: flags, data: a.mem[:n:n], addr: a.addr, mip: mip}
	h := backend.Array(d.b.nextHandle())
	d.arrays.mu.Lock()
	if d.arrays.arrays == nil {
		d.arrays.arrays = map[backend.Array]*simArray{}
	}
	d.arrays.arrays[h] = arr
	d.arrays.mu.Unlock()
	return h, arr, nil
}

// checkArray makes the checks every array allocation starts with.
func (d *device) checkArray(op string, f backend.ChannelFormat, e backend.Extent3D, flags uint32) error {
	if err := d.alive(op); err != nil {
		return err
	}
	if err := f.Validate(); err != nil {
		return d.fail(op, cudaerr.InvalidChannelDescriptor, "%v", err)
	}
	if why := arrayShape(e, flags); why != "" {
		return d.fail(op, cudaerr.InvalidValue, "array of %d×%d×%d with flags %#x: %s", e.Width, e.Height, e.Depth, flags, why)
	}
	return nil
}

// MallocArray allocates a 1D or 2D array.
func (d *device) MallocArray(f backend.ChannelFormat, width, height uint64, flags uint32) (backend.Array, error) {
	const op = "cudaMallocArray"
	if flags&(backend.ArrayLayered|backend.ArrayCubemap) != 0 {
		return 0, d.fail(op, cudaerr.InvalidValue, "flags %#x: layered and cubemap arrays are made by cudaMalloc3DArray", flags)
	}
	e := backend.Extent3D{Width: width, Height: height}
	if err := d.checkArray(op, f, e, flags); err != nil {
		return 0, err
	}
	h, _, err := d.newArray(op, f, e, flags, 0)
	return h, err
}

// Malloc3DArray allocates an array of any shape.
func (d *device) Malloc3DArray(f backend.ChannelFormat, e backend.Extent3D, flags uint32) (backend.Array, error) {
	const op = "cudaMalloc3DArray"
	if err := d.checkArray(op, f, e, flags); err != nil {
		return 0, err
	}
	h, _, err := d.newArray(op, f, e, flags, 0)
	return h, err
}

// array looks up a live array for call op.
func (d *device) array(op string, h backend.Array) (*simArray, error) {
	if err := d.alive(op); err != nil {
		return nil, err
	}
	a := d.lookupArray(h)
	if a == nil {
		return nil, d.fail(op, cudaerr.InvalidResourceHandle, "array %#x is not a live array of device %d (freed, or never made)", uintptr(h), d.ordinal)
	}
	return a, nil
}

// dropArray unregisters an array and frees its storage.
func (d *device) dropArray(h backend.Array, a *simArray) {
	d.arrays.mu.Lock()
	delete(d.arrays.arrays, h)
	d.arrays.mu.Unlock()
	d.mem.remove(a.addr)
}

// FreeArray frees an array that is not a mipmap level.
func (d *device) FreeArray(h backend.Array) error {
	const op = "cudaFreeArray"
	if h == 0 {
		return nil
	}
	a, err := d.array(op, h)
	if err != nil {
		return err
	}
	if a.mip != 0 {
		return d.fail(op, cudaerr.InvalidValue, "array %#x is a level of mipmapped array %#x: free that instead", uintptr(h), uintptr(a.mip))
	}
	d.dropArray(h, a)
	return nil
}

// ArrayInfo describes an array.
func (d *device) ArrayInfo(h backend.Array) (backend.ArrayInfo, error) {
	a, err := d.array("cudaArrayGetInfo", h)
	if err != nil {
		return backend.ArrayInfo{}, err
	}
	return backend.ArrayInfo{Format: a.format, Extent: backend.Extent3D{Width: a.width, Height: a.height, Depth: a.depth}, Flags: a.flags}, nil
}

// ChannelDesc is an array's format.
func (d *device) ChannelDesc(h backend.Array) (backend.ChannelFormat, error) {
	a, err := d.array("cudaGetChannelDesc", h)
	if err != nil {
		return backend.ChannelFormat{}, err
	}
	return a.format, nil
}

// ArrayPlane refuses every plane: the formats gpuactor makes arrays of are single-planar,
// and the runtime gives planes of multi-planar (NV12-like) arrays only.
func (d *device) ArrayPlane(h backend.Array, plane uint32) (backend.Array, error) {
	const op = "cudaArrayGetPlane"
	if _, err := d.array(op, h); err != nil {
		return 0, err
	}
	return 0, d.fail(op, cudaerr.InvalidValue, "array %#x has no plane %d: only multi-planar arrays have planes", uintptr(h), plane)
}

// mipLevels is how many levels a mipmap of level 0 extent e may have: until every halved
// extent (not the layers) is 1.
func mipLevels(e backend.Extent3D, flags uint32) uint32 {
	m := max(e.Width, e.Height)
	if flags&(backend.ArrayLayered|backend.ArrayCubemap) == 0 {
		m = max(m, e.Depth)
	}
	return uint32(bits.Len64(m))
}

// mipExtent is level i of a mipmap of level 0 extent e: each used extent halved i times,
// never below 1; the layers (and faces) stay.
func mipExtent(e backend.Extent3D, flags uint32, i uint32) backend.Extent3D {
	half := func(x uint64) uint64 {
		if x == 0 {
			return 0
		}
		return max(x>>i, 1)
	}
	out := backend.Extent3D{Width: half(e.Width), Height: half(e.Height), Depth: half(e.Depth)}
	if flags&(backend.ArrayLayered|backend.ArrayCubemap) != 0 {
		out.Depth = e.Depth
	}
	if flags&backend.ArrayCubemap != 0 {
		out.Height = out.Width
	}
	return out
}

// MallocMipmappedArray allocates levels levels, each registered as an array too.
func (d *device) MallocMipmappedArray(f backend.ChannelFormat, e backend.Extent3D, levels, flags uint32) (backend.MipmappedArray, error) {
	const op = "cudaMallocMipmappedArray"
	if err := d.checkArray(op, f, e, flags); err != nil {
		return 0, err
	}
	if flags&backend.ArrayTextureGather != 0 {
		return 0, d.fail(op, cudaerr.InvalidValue, "texture gather is not for mipmapped arrays")
	}
	// The runtime clamps the level count to [1, 1+floor(log2(largest extent))], as the
	// reference manual says and the GPU does (it takes more levels than halvings).
	levels = min(max(levels, 1), mipLevels(e, flags))
	mh := backend.MipmappedArray(d.b.nextHandle())
	m := &simMipmapped{format: f, extent: e, flags: flags}
	for i := range levels {
		h, a, err := d.newArray(op, f, mipExtent(e, flags, i), flags, mh)
		if err != nil {
			for j, l := range m.levels {
				d.dropArray(m.handles[j], l)
			}
			return 0, err
		}
		m.levels = append(m.levels, a)
		m.handles = append(m.handles, h)
	}
	d.arrays.mu.Lock()
	if d.arrays.mipmaps == nil {
		d.arrays.mipmaps = map[backend.MipmappedArray]*simMipmapped{}
	}
	d.arrays.mipmaps[mh] = m
	d.arrays.mu.Unlock()
	return mh, nil
}

// mipmapped looks up a live mipmapped array for call op.
func (d *device) mipmapped(op string, h backend.MipmappedArray) (*simMipmapped, error) {
	if err := d.alive(op); err != nil {
		return nil, err
	}
	m := d.lookupMipmapped(h)
	if m == nil {
		return nil, d.fail(op, cudaerr.InvalidResourceHandle, "mipmapped array %#x is not live on device %d (freed, or never made)", uintptr(h), d.ordinal)
	}
	return m, nil
}

// MipmappedArrayLevel is the handle of one level.
func (d *device) MipmappedArrayLevel(h backend.MipmappedArray, level uint32) (backend.Array, error) {
	const op = "cudaGetMipmappedArrayLevel"
	m, err := d.mipmapped(op, h)
	if err != nil {
		return 0, err
	}
	if int(level) >= len(m.levels) {
		return 0, d.fail(op, cudaerr.InvalidValue, "level %d of a mipmapped array of %d levels", level, len(m.levels))
	}
	return m.handles[level], nil
}

// FreeMipmappedArray frees a mipmapped array and its levels.
func (d *device) FreeMipmappedArray(h backend.MipmappedArray) error {
	const op = "cudaFreeMipmappedArray"
	if h == 0 {
		return nil
	}
	m, err := d.mipmapped(op, h)
	if err != nil {
		return err
	}
	d.arrays.mu.Lock()
	delete(d.arrays.mipmaps, h)
	d.arrays.mu.Unlock()
	for i, a := range m.levels {
		d.dropArray(m.handles[i], a)
	}
	return nil
}

// sparseTileBytes is the size of one sparse tile, and the alignment of deferred mappings.
const sparseTileBytes = 64 << 10

// tileShape is a 64 KiB tile's extent in elements of es bytes, as the hardware shapes it.
func tileShape(es uint64, threeD bool) (w, h, d uint32) {
	if threeD {
		switch es {
		case 1:
			return 64, 32, 32
		case 2:
			return 32, 32, 32
		case 4:
			return 32, 32, 16
		case 8:
			return 32, 16, 16
		}
		return 16, 16, 16
	}
	switch es {
	case 1:
		return 256, 256, 1
	case 2:
		return 256, 128, 1
	case 4:
		return 128, 128, 1
	case 8:
		return 128, 64, 1
	}
	return 64, 64, 1
}

// sparseProps models the sparse layout of levels of one format: the mip tail starts at the
// first level that fits in one tile, and takes a tile per layer.
func sparseProps(levels []*simArray) backend.ArraySparseProperties {
	a := levels[0]
	threeD := a.depth != 0 && a.flags&(backend.ArrayLayered|backend.ArrayCubemap) == 0
	tw, th, td := tileShape(a.elemSize(), threeD)
	p := backend.ArraySparseProperties{TileWidth: tw, TileHeight: th, TileDepth: td, MiptailFirstLevel: uint32(len(levels))}
	for i, l := range levels {
		w, h, d := l.dims()
		if w < uint64(tw) && h < uint64(th) && (!threeD || d < uint64(td)) {
			p.MiptailFirstLevel = uint32(i)
			p.MiptailSize = sparseTileBytes
			break
		}
	}
	if a.flags&backend.ArrayLayered == 0 {
		p.Flags = backend.ArraySparseSingleMipTail
	}
	return p
}

// ArraySparseProperties is the tile layout of a sparse array.
func (d *device) ArraySparseProperties(h backend.Array) (backend.ArraySparseProperties, error) {
	const op = "cudaArrayGetSparseProperties"
	a, err := d.array(op, h)
	if err != nil {
		return backend.ArraySparseProperties{}, err
	}
	if a.flags&backend.ArraySparse == 0 {
		return backend.ArraySparseProperties{}, d.fail(op, cudaerr.InvalidValue, "array %#x was not made with the sparse flag", uintptr(h))
	}
	if a.mip != 0 {
		return backend.ArraySparseProperties{}, d.fail(op, cudaerr.InvalidValue, "array %#x is a mipmap level: ask its mipmapped array %#x", uintptr(h), uintptr(a.mip))
	}
	// A plain array's mip tail starts at level 0; with a single mip tail its size is the
	// whole array's, as the runtime documents.
	p := sparseProps([]*simArray{a})
	p.MiptailFirstLevel, p.MiptailSize = 0, 0
	if p.Flags&backend.ArraySparseSingleMipTail != 0 {
		p.MiptailSize = requirements([]*simArray{a}).Size
	}
	return p, nil
}

// MipmappedArraySparseProperties is the tile layout of a sparse mipmapped array.
func (d *device) MipmappedArraySparseProperties(h backend.MipmappedArray) (backend.ArraySparseProperties, error) {
	const op = "cudaMipmappedArrayGetSparseProperties"
	m, err := d.mipmapped(op, h)
	if err != nil {
		return backend.ArraySparseProperties{}, err
	}
	if m.flags&backend.ArraySparse == 0 {
		return backend.ArraySparseProperties{}, d.fail(op, cudaerr.InvalidValue, "mipmapped array %#x was not made with the sparse flag", uintptr(h))
	}
	return sparseProps(m.levels), nil
}

// requirements is the memory levels need once mapped: whole 64 KiB tiles of each level
// (each layer or face tiled on its own).
func requirements(levels []*simArray) backend.ArrayMemoryRequirements {
	a := levels[0]
	threeD := a.depth != 0 && a.flags&(backend.ArrayLayered|backend.ArrayCubemap) == 0
	tw, th, td := tileShape(a.elemSize(), threeD)
	ceil := func(x uint64, t uint32) uint64 { return (x + uint64(t) - 1) / uint64(t) }
	var n uint64
	for _, l := range levels {
		w, h, d := l.dims()
		tiles := ceil(w, tw) * ceil(h, th) * d
		if threeD {
			tiles = ceil(w, tw) * ceil(h, th) * ceil(d, td)
		}
		n += tiles * sparseTileBytes
	}
	return backend.ArrayMemoryRequirements{Size: n, Alignment: sparseTileBytes}
}

// ArrayMemoryRequirements is what a deferred-mapping array needs.
func (d *device) ArrayMemoryRequirements(h backend.Array) (backend.ArrayMemoryRequirements, error) {
	const op = "cudaArrayGetMemoryRequirements"
	a, err := d.array(op, h)
	if err != nil {
		return backend.ArrayMemoryRequirements{}, err
	}
	if a.flags&backend.ArrayDeferredMapping == 0 {
		return backend.ArrayMemoryRequirements{}, d.fail(op, cudaerr.InvalidValue, "array %#x was not made with the deferred-mapping flag", uintptr(h))
	}
	return requirements([]*simArray{a}), nil
}

// MipmappedArrayMemoryRequirements is what a deferred-mapping mipmapped array needs.
func (d *device) MipmappedArrayMemoryRequirements(h backend.MipmappedArray) (backend.ArrayMemoryRequirements, error) {
	const op = "cudaMipmappedArrayGetMemoryRequirements"
	m, err := d.mipmapped(op, h)
	if err != nil {
		return backend.ArrayMemoryRequirements{}, err
	}
	if m.flags&backend.ArrayDeferredMapping == 0 {
		return backend.ArrayMemoryRequirements{}, d.fail(op, cudaerr.InvalidValue, "mipmapped array %#x was not made with the deferred-mapping flag", uintptr(h))
	}
	return requirements(m.levels), nil
}
