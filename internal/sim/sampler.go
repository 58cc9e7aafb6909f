package sim

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// texView is what a simulated kernel sees as cuda.KernelCall.Textures: the device's texture
// and surface objects, read through the launch's view of memory (so that a texture over freed
// memory faults the kernel as an illegal address).
type texView struct {
	d   *device
	mem *memView
}

// image is one level of a texture's resource: w×h texels in each of d slices (the slices of
// a 3D array, the layers of a layered one, layer*6+face of a cubemap).
type image struct {
	w, h, d int64
	format  cuda.ChannelFormat
	at      func(x, y, z int64) ([]byte, error)
}

func (v texView) resourceImage(x *simTexture, level int) (*image, error) {
	r := x.res
	es := int64(r.Format.Size())
	switch r.Type {
	case backend.ResourceLinear:
		return &image{w: int64(r.Size) / es, h: 1, d: 1, format: r.Format, at: func(i, _, _ int64) ([]byte, error) {
			return v.mem.Bytes(r.Ptr+cuda.DevicePtr(i*es), uint64(es))
		}}, nil
	case backend.ResourcePitch2D:
		return &image{w: int64(r.Width), h: int64(r.Height), d: 1, format: r.Format, at: func(i, j, _ int64) ([]byte, error) {
			return v.mem.Bytes(r.Ptr+cuda.DevicePtr(j*int64(r.Pitch)+i*es), uint64(es))
		}}, nil
	}
	a := x.arr
	if x.mip != nil {
		a = x.mip.levels[int(x.view.FirstMipmapLevel)+level]
	}
	if v.d.arrayGone(a) {
		return nil, fmt.Errorf("texture reads an array that was freed")
	}
	w, h, d := a.dims()
	format := a.format
	if f, ok := viewFormat(x.view.Format); ok {
		format = f // the same element size: the view reads the bytes as its own format
	}
	return &image{w: int64(w), h: int64(h), d: int64(d), format: format, at: func(i, j, k int64) ([]byte, error) {
		b := a.texel(i, j, k)
		if b == nil {
			return nil, fmt.Errorf("texel (%d, %d, %d) is outside the array", i, j, k)
		}
		return b, nil
	}}, nil
}

// arrayGone reports whether a is no longer one of d's live arrays (alone or as a mipmap level).
func (d *device) arrayGone(a *simArray) bool {
	d.arrays.mu.Lock()
	defer d.arrays.mu.Unlock()
	for _, x := range d.arrays.arrays {
		if x == a {
			return false
		}
	}
	for _, m := range d.arrays.mipmaps {
		for _, x := range m.levels {
			if x == a {
				return false
			}
		}
	}
	return true
}

// Sample implements cuda.SimTextures.
func (v texView) Sample(t cuda.TextureObject, q cuda.TexQuery) ([4]float64, error) {
	x := v.d.lookupTexture(t)
	if x == nil {
		return [4]float64{}, fmt.Errorf("texture object %#x is not a live texture object of device %d (destroyed, or never made)", uint64(t), v.d.ordinal)
	}
	linear := x.res.Type == backend.ResourceLinear
	if (q.Fetch == cuda.Fetch1D) != linear {
		if linear {
			return [4]float64{}, fmt.Errorf("texture object %#x is over linear memory: fetch it with tex1Dfetch", uint64(t))
		}
		return [4]float64{}, fmt.Errorf("tex1Dfetch of texture object %#x, which is not over linear memory", uint64(t))
	}
	s := sampler{tex: x}
	if linear {
		img, _ := v.resourceImage(x, 0)
		if q.Index < 0 || int64(q.Index) >= img.w {
			return [4]float64{}, nil
		}
		return s.texel(img, int64(q.Index), 0, 0)
	}
	if x.mip == nil {
		img, err := v.resourceImage(x, 0)
		if err != nil {
			return [4]float64{}, err
		}
		return s.fetch(img, q)
	}
	// A mipmapped texture: the level the fetch names, biased and clamped, filtered between
	// the two nearest levels with a linear mipmap filter. A view's first level is level 0.
	top := float64(len(x.mip.levels) - 1)
	if x.view != (backend.ResourceViewDesc{}) {
		top = float64(x.view.LastMipmapLevel - x.view.FirstMipmapLevel)
	}
	level := float64(q.Level) + float64(x.tex.MipmapLevelBias)
	// The clamps apply as given: a zeroed descriptor (maxMipmapLevelClamp 0) reads level 0 only,
	// as on the GPU.
	level = math.Min(math.Max(level, float64(x.tex.MinMipmapLevelClamp)), float64(x.tex.MaxMipmapLevelClamp))
	level = math.Min(math.Max(level, 0), top)
	if x.tex.MipmapFilter == backend.FilterPoint {
		img, err := v.resourceImage(x, int(math.Floor(level+0.5)))
		if err != nil {
			return [4]float64{}, err
		}
		return s.fetch(img, q)
	}
	lo := math.Floor(level)
	a := fraction8(level - lo)
	img, err := v.resourceImage(x, int(lo))
	if err != nil {
		return [4]float64{}, err
	}
	r0, err := s.fetch(img, q)
	if err != nil || a == 0 {
		return r0, err
	}
	img, err = v.resourceImage(x, int(lo)+1)
	if err != nil {
		return [4]float64{}, err
	}
	r1, err := s.fetch(img, q)
	for i := range r0 {
		r0[i] = (1-a)*r0[i] + a*r1[i]
	}
	return r0, err
}

// sampler samples one texture object.
type sampler struct{ tex *simTexture }

// fetch samples img as q's function does.
func (s sampler) fetch(img *image, q cuda.TexQuery) ([4]float64, error) {
	coords := [3]float64{float64(q.X), float64(q.Y), float64(q.Z)}
	var dims int
	var slice int64
	cube := false
	switch q.Fetch {
	case cuda.Tex1D:
		dims = 1
	case cuda.Tex2D:
		dims = 2
	case cuda.Tex3D:
		dims = 3
	case cuda.Tex1DLayered:
		dims, slice = 1, s.layer(q.Layer, img.d)
	case cuda.Tex2DLayered:
		dims, slice = 2, s.layer(q.Layer, img.d)
	case cuda.TexCubemap, cuda.TexCubemapLayered:
		face, u, w := cubeFace(coords[0], coords[1], coords[2])
		layer := int64(0)
		if q.Fetch == cuda.TexCubemapLayered {
			layer = clampInt(int64(q.Layer), img.d/6-1)
		}
		dims, slice, cube = 2, layer*6+int64(face), true
		coords = [3]float64{u, w, 0}
	default:
		return [4]float64{}, fmt.Errorf("texture fetch %d is not one the simulator models", q.Fetch)
	}
	return s.filter(img, dims, coords, slice, cube)
}

// layer is the slice of layer l of a layered image of n layers: clamped to the layers, or to
// the view's, counted from its first.
func (s sampler) layer(l int32, n int64) int64 {
	v := s.tex.view
	if v == (backend.ResourceViewDesc{}) {
		return clampInt(int64(l), n-1)
	}
	return int64(v.FirstLayer) + clampInt(int64(l), int64(v.LastLayer-v.FirstLayer))
}

// cubeFace is the face a direction points at and where it crosses it, in [0, 1] coordinates of
// the face (the CUDA programming guide's cubemap table).
func cubeFace(x, y, z float64) (face int, u, v float64) {
	ax, ay, az := math.Abs(x), math.Abs(y), math.Abs(z)
	var m, sc, tc float64
	switch {
	case ax >= ay && ax >= az:
		m, tc = ax, -y
		if x >= 0 {
			face, sc = 0, -z
		} else {
			face, sc = 1, z
		}
	case ay >= az:
		m, sc = ay, x
		if y >= 0 {
			face, tc = 2, z
		} else {
			face, tc = 3, -z
		}
	default:
		m, tc = az, -y
		if z >= 0 {
			face, sc = 4, x
		} else {
			face, sc = 5, -x
		}
	}
	if m == 0 {
		return 0, 0.5, 0.5
	}
	return face, (sc/m + 1) / 2, (tc/m + 1) / 2
}

func clampInt(i, hi int64) int64 {
	if i < 0 {
		return 0
	}
	if i > hi {
		return hi
	}
	return i
}

// fraction8 is a filtering weight as the texture unit holds it: 9-bit fixed point with 8
// fractional bits (the CUDA programming guide, "Texture Fetching").
func fraction8(a float64) float64 { return math.Round(a*256) / 256 }

// filter samples dims dimensions of img at coords, in slice: point or linear filtering, with
// the address mode of each dimension.
func (s sampler) filter(img *image, dims int, coords [3]float64, slice int64, cube bool) ([4]float64, error) {
	t := s.tex.tex
	size := [3]int64{img.w, img.h, img.d}
	modes := [3]int32{t.AddressX, t.AddressY, t.AddressZ}
	normalized := t.Normalized != 0 || cube
	linear := t.Filter == backend.FilterLinear && s.floatResult(img.format)
	var idx [3][2]int64
	var wts [3][2]float64
	corners := [3]int{1, 1, 1}
	for i := 0; i < dims; i++ {
		n := size[i]
		u := coords[i]
		if normalized {
			u *= float64(n)
		}
		if cube || !normalized && (modes[i] == backend.AddressWrap || modes[i] == backend.AddressMirror) {
			// Unnormalized coordinates support only clamp and border: the runtime switches wrap
			// and mirror to clamp. Cubemap faces clamp.
			modes[i] = backend.AddressClamp
		}
		if !linear {
			idx[i][0], wts[i][0] = int64(math.Floor(u)), 1
			continue
		}
		u -= 0.5
		i0 := math.Floor(u)
		a := fraction8(u - i0)
		idx[i] = [2]int64{int64(i0), int64(i0) + 1}
		wts[i] = [2]float64{1 - a, a}
		corners[i] = 2
	}
	var out [4]float64
	for c2 := 0; c2 < corners[2]; c2++ {
		for c1 := 0; c1 < corners[1]; c1++ {
			for c0 := 0; c0 < corners[0]; c0++ {
				w := wts[0][c0]
				pos := [3]int64{idx[0][c0], 0, slice}
				if dims > 1 {
					w *= wts[1][c1]
					pos[1] = idx[1][c1]
				}
				if dims > 2 {
					w *= wts[2][c2]
					pos[2] = idx[2][c2]
				}
				if w == 0 {
					continue
				}
				inside := true
				for i := 0; i < dims; i++ {
					var ok bool
					pos[i], ok = address(pos[i], size[i], modes[i])
					inside = inside && ok
				}
				var v [4]float64
				if inside {
					var err error
					if v, err = s.texel(img, pos[0], pos[1], pos[2]); err != nil {
						return out, err
					}
				} else if linear {
					v = s.border(img.format)
				} else {
					v = s.pointBorder(img.format)
				}
				if !linear {
					return v, nil
				}
				for k := range out {
					out[k] += w * v[k]
				}
			}
		}
	}
	return out, nil
}

// address maps texel index i of a dimension of n texels by mode; ok is false outside the
// texture in border mode.
func address(i, n int64, mode int32) (int64, bool) {
	switch mode {
	case backend.AddressWrap:
		i %= n
		if i < 0 {
			i += n
		}
	case backend.AddressMirror:
		i %= 2 * n
		if i < 0 {
			i += 2 * n
		}
		if i >= n {
			i = 2*n - 1 - i
		}
	case backend.AddressBorder:
		return i, i >= 0 && i < n
	default:
		i = clampInt(i, n-1)
	}
	return i, true
}

// floatResult reports whether a fetch of format f gives floats: a float format, or 8- and
// 16-bit integers read as normalized floats. Only those filter linearly.
func (s sampler) floatResult(f cuda.ChannelFormat) bool {
	return f.Kind == cuda.ChannelFloat || s.tex.tex.Read == backend.ReadNormalizedFloat && f.X <= 16
}

// border is the border colour as a fetch of f gives it: floats for a float result, else the
// colour's bits reinterpreted as integers, as the runtime documents (the low bits of the
// channel's size).
func (s sampler) border(f cuda.ChannelFormat) [4]float64 {
	t := s.tex.tex
	c := [4]float32{t.BorderR, t.BorderG, t.BorderB, t.BorderA}
	var v [4]float64
	for i, x := range c[:f.Channels()] {
		switch {
		case s.floatResult(f):
			v[i] = float64(x)
		case f.Kind == cuda.ChannelSigned: // the low bits of the channel's size, sign-extended
			shift := 32 - uint(f.X)
			v[i] = float64(int32(math.Float32bits(x)<<shift) >> shift)
		default:
			v[i] = float64(math.Float32bits(x) << (32 - uint(f.X)) >> (32 - uint(f.X)))
		}
	}
	return v
}

// texel is the element at (x, y, z) of img after read-mode and sRGB conversion.
func (s sampler) texel(img *image, x, y, z int64) ([4]float64, error) {
	b, err := img.at(x, y, z)
	if err != nil {
		return [4]float64{}, err
	}
	f := img.format
	n := f.Channels()
	bytes := int(f.X / 8)
	norm := s.tex.tex.Read == backend.ReadNormalizedFloat && f.Kind != cuda.ChannelFloat && bytes <= 2
	var v [4]float64
	for i := 0; i < n; i++ {
		e := b[i*bytes : (i+1)*bytes]
		switch {
		case f.Kind == cuda.ChannelFloat && bytes == 2:
			v[i] = float64(halfToFloat(binary.LittleEndian.Uint16(e)))
		case f.Kind == cuda.ChannelFloat:
			v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(e)))
		case f.Kind == cuda.ChannelSigned:
			var x int64
			switch bytes {
			case 1:
				x = int64(int8(e[0]))
			case 2:
				x = int64(int16(binary.LittleEndian.Uint16(e)))
			default:
				x = int64(int32(binary.LittleEndian.Uint32(e)))
			}
			v[i] = float64(x)
			if norm {
				v[i] = math.Max(float64(x)/float64(int64(1)<<(8*bytes-1)-1), -1)
			}
		default:
			var x uint64
			switch bytes {
			case 1:
				x = uint64(e[0])
			case 2:
				x = uint64(binary.LittleEndian.Uint16(e))
			default:
				x = uint64(binary.LittleEndian.Uint32(e))
			}
			v[i] = float64(x)
			if norm {
				v[i] = float64(x) / float64(uint64(1)<<(8*bytes)-1)
			}
		}
	}
	if s.tex.tex.SRGB != 0 && norm && f.Kind == cuda.ChannelUnsigned && bytes == 1 {
		for i := 0; i < n && i < 3; i++ { // alpha stays linear
			v[i] = srgbToLinear(v[i])
		}
	}
	return v, nil
}

// srgbToLinear is the sRGB transfer function's inverse.
func srgbToLinear(c float64) float64 {
	if c <= 0.04045 {
		return c / 12.92
	}
	return math.Pow((c+0.055)/1.055, 2.4)
}

// halfToFloat widens an IEEE binary16 value.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal
		f := float32(frac) / 1024 / 16384
		if sign != 0 {
			f = -f
		}
		return f
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
}

// SurfaceElement implements cuda.SimTextures.
func (v texView) SurfaceElement(sf cuda.SurfaceObject, x, y, z int32, n int, mode cuda.BoundaryMode) ([]byte, error) {
	s := v.d.lookupSurface(sf)
	if s == nil {
		return nil, fmt.Errorf("surface object %#x is not a live surface object of device %d (destroyed, or never made)", uint64(sf), v.d.ordinal)
	}
	a := s.arr
	if v.d.arrayGone(a) {
		return nil, fmt.Errorf("surface object %#x reads an array that was freed", uint64(sf))
	}
	es := int32(a.elemSize())
	if int32(n) != es {
		return nil, fmt.Errorf("surface object %#x holds %d-byte elements (%s), accessed as %d bytes", uint64(sf), es, a.format, n)
	}
	if x%es != 0 {
		return nil, fmt.Errorf("surface object %#x: x = %d bytes is not a multiple of its %d-byte elements", uint64(sf), x, es)
	}
	w, h, d := a.dims()
	pos := [3]int64{int64(x / es), int64(y), int64(z)}
	if x < 0 {
		pos[0] = -1
	}
	size := [3]int64{int64(w), int64(h), int64(d)}
	for i := range pos {
		if pos[i] >= 0 && pos[i] < size[i] {
			continue
		}
		switch mode {
		case cuda.BoundaryZero:
			return nil, nil
		case cuda.BoundaryClamp:
			pos[i] = clampInt(pos[i], size[i]-1)
		default:
			return nil, fmt.Errorf("surface object %#x: access at (%d bytes, %d, %d) is outside its %dx%dx%d elements (boundary mode trap)",
				uint64(sf), x, y, z, w, h, d)
		}
	}
	return a.texel(pos[0], pos[1], pos[2]), nil
}
