package sim

import (
	"math"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// pointBorder is the border colour as a point-filtered fetch of f gives it. For 8- and 16-bit
// integer formats read as normalized floats the texture unit stores the colour as a texel of
// the format and reads that texel back: 0.5 of rgba8 comes back as 127/255, of int16 as
// 16383/32767, and an sRGB texture encodes the colour to 8-bit sRGB and decodes it again.
// The GPU rounds halves down (ceil(v·max − 0.5)). Linear filtering blends the colour
// unquantized, and other formats read it as border does.
func (s sampler) pointBorder(f cuda.ChannelFormat) [4]float64 {
	v := s.border(f)
	t := s.tex.tex
	if t.Read != backend.ReadNormalizedFloat || f.Kind == cuda.ChannelFloat || f.X > 16 {
		return v
	}
	bits := int(f.X)
	srgb := t.SRGB != 0 && f.Kind == cuda.ChannelUnsigned && bits == 8
	for i := 0; i < f.Channels(); i++ {
		if f.Kind == cuda.ChannelSigned {
			m := float64(int64(1)<<(bits-1) - 1)
			q := math.Ceil(math.Max(-1, math.Min(1, v[i]))*m - 0.5)
			v[i] = math.Max(q/m, -1)
			continue
		}
		m := float64(uint64(1)<<bits - 1)
		c := math.Max(0, math.Min(1, v[i]))
		encode := srgb && i < 3 // alpha stays linear
		if encode {
			c = linearToSRGB(c)
		}
		v[i] = math.Ceil(c*m-0.5) / m
		if encode {
			v[i] = srgbToLinear(v[i])
		}
	}
	return v
}

// linearToSRGB is the sRGB transfer function.
func linearToSRGB(c float64) float64 {
	if c <= 0.0031308 {
		return c * 12.92
	}
	return 1.055*math.Pow(c, 1/2.4) - 0.055
}
