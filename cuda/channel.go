package cuda

import "fmt"

// ChannelKind is how the bits of a channel are read (cudaChannelFormatKind).
type ChannelKind int32

// Channel kinds of the plain formats (values as in the runtime).
const (
	ChannelSigned   ChannelKind = 0 // two's-complement integers
	ChannelUnsigned ChannelKind = 1 // unsigned integers
	ChannelFloat    ChannelKind = 2 // IEEE floats: 16 or 32 bits
)

// String names the kind.
func (k ChannelKind) String() string {
	switch k {
	case ChannelSigned:
		return "signed"
	case ChannelUnsigned:
		return "unsigned"
	case ChannelFloat:
		return "float"
	}
	return fmt.Sprintf("ChannelKind(%d)", int32(k))
}

// ChannelFormat is the layout of one element of a CUDA array, texture or surface
// (cudaChannelFormatDesc): the bits of up to four channels x, y, z, w, all of one kind. The
// used channels come first; an unused channel has 0 bits.
type ChannelFormat struct {
	X, Y, Z, W int32
	Kind       ChannelKind
}

// Texel is a Go type that can be one channel of an element.
type Texel interface {
	int8 | uint8 | int16 | uint16 | int32 | uint32 | float32
}

// Channels is the format of elements of n channels (1, 2 or 4) of type T, as
// cudaCreateChannelDesc<T> builds it: Channels[float32](1) is one 32-bit float,
// Channels[uint8](4) is RGBA8. Validate refuses other channel counts.
func Channels[T Texel](n int) ChannelFormat {
	var zero T
	var bits int32
	var kind ChannelKind
	switch any(zero).(type) {
	case int8:
		bits, kind = 8, ChannelSigned
	case uint8:
		bits, kind = 8, ChannelUnsigned
	case int16:
		bits, kind = 16, ChannelSigned
	case uint16:
		bits, kind = 16, ChannelUnsigned
	case int32:
		bits, kind = 32, ChannelSigned
	case uint32:
		bits, kind = 32, ChannelUnsigned
	default:
		bits, kind = 32, ChannelFloat
	}
	f := ChannelFormat{Kind: kind}
	ch := []*int32{&f.X, &f.Y, &f.Z, &f.W}
	for i := 0; i < n && i < 4; i++ {
		*ch[i] = bits
	}
	return f
}

// Channels is how many channels the format uses: the leading ones with bits.
func (f ChannelFormat) Channels() int {
	n := 0
	for _, b := range [4]int32{f.X, f.Y, f.Z, f.W} {
		if b == 0 {
			break
		}
		n++
	}
	return n
}

// Size is the bytes of one element.
func (f ChannelFormat) Size() uint64 {
	return uint64(f.X+f.Y+f.Z+f.W) / 8
}

// Validate says what is wrong with the format, or nil: channels of 8, 16 or 32 bits, all the
// same size, used ones first, 1, 2 or 4 of them, floats of 16 or 32 bits, a known kind.
func (f ChannelFormat) Validate() error {
	bits := [4]int32{f.X, f.Y, f.Z, f.W}
	n := f.Channels()
	if n == 0 {
		return fmt.Errorf("channel format %s has no channels", f)
	}
	if n == 3 {
		return fmt.Errorf("channel format %s has 3 channels: CUDA arrays take 1, 2 or 4", f)
	}
	for i, b := range bits {
		if i >= n {
			if b != 0 {
				return fmt.Errorf("channel format %s has a gap: channel %d is unused but a later one is", f, i)
			}
			continue
		}
		if b != bits[0] {
			return fmt.Errorf("channel format %s mixes channel sizes", f)
		}
	}
	switch f.Kind {
	case ChannelSigned, ChannelUnsigned:
		if bits[0] != 8 && bits[0] != 16 && bits[0] != 32 {
			return fmt.Errorf("channel format %s: integer channels are 8, 16 or 32 bits", f)
		}
	case ChannelFloat:
		if bits[0] != 16 && bits[0] != 32 {
			return fmt.Errorf("channel format %s: float channels are 16 or 32 bits", f)
		}
	default:
		return fmt.Errorf("channel format %s: unsupported channel kind", f)
	}
	return nil
}

// String is like "float32x1" or "unsigned8x4", or the raw bits when the channels differ.
func (f ChannelFormat) String() string {
	n := f.Channels()
	bits := [4]int32{f.X, f.Y, f.Z, f.W}
	same := n > 0
	for i, b := range bits {
		same = same && (i < n && b == f.X || i >= n && b == 0)
	}
	if same {
		return fmt.Sprintf("%s%dx%d", f.Kind, f.X, n)
	}
	return fmt.Sprintf("%s{%d,%d,%d,%d}", f.Kind, f.X, f.Y, f.Z, f.W)
}

// TextureObject is a texture object (cudaTextureObject_t): a kernel takes it as an argument
// and samples through it (tex1D, tex2D, tex3D...).
type TextureObject uint64

// SurfaceObject is a surface object (cudaSurfaceObject_t): a kernel takes it as an argument
// and reads and writes a CUDA array through it (surf2Dread, surf2Dwrite...).
type SurfaceObject uint64
