package sim

import (
	"fmt"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// viewFormat is the channel format of a non-block-compressed cudaResourceViewFormat (1 to
// 0x18); ok is false for block-compressed and unknown ones.
func viewFormat(v int32) (cuda.ChannelFormat, bool) {
	if v < 1 || v > 0x18 {
		return cuda.ChannelFormat{}, false
	}
	groups := [8]struct {
		bits int32
		kind cuda.ChannelKind
	}{{8, cuda.ChannelUnsigned}, {8, cuda.ChannelSigned}, {16, cuda.ChannelUnsigned}, {16, cuda.ChannelSigned},
		{32, cuda.ChannelUnsigned}, {32, cuda.ChannelSigned}, {16, cuda.ChannelFloat}, {32, cuda.ChannelFloat}}
	g := groups[(v-1)/3]
	f := cuda.ChannelFormat{Kind: g.kind}
	n := [3]int{1, 2, 4}[(v-1)%3]
	for i, p := range []*int32{&f.X, &f.Y, &f.Z, &f.W} {
		if i < n {
			*p = g.bits
		}
	}
	return f, true
}

// checkView says why view cannot apply to the array or mipmapped array a texture reads, as
// cudaCreateTextureObject documents it: a format of the elements' size (the simulator decodes
// no block-compressed format), the resource's own extents, mipmap levels only of a mipmapped
// array and layers only of a layered one, each range in order and inside the resource.
func checkView(view backend.ResourceViewDesc, arr *simArray, mip *simMipmapped) (cudaerr.Code, string) {
	base := arr
	levels := 1
	if mip != nil {
		base, levels = mip.levels[0], len(mip.levels)
	}
	if view.Format != 0 {
		f, ok := viewFormat(view.Format)
		if !ok {
			if view.Format <= 0x22 {
				return cudaerr.NotSupported, fmt.Sprintf("resource view format %#x is block compressed, which the simulator does not decode", view.Format)
			}
			return cudaerr.InvalidValue, fmt.Sprintf("resource view format %#x is not a cudaResourceViewFormat", view.Format)
		}
		if f.Size() != base.elemSize() {
			return cudaerr.InvalidValue, fmt.Sprintf("resource view format %s has %d-byte elements, the array's (%s) are %d bytes", f, f.Size(), base.format, base.elemSize())
		}
	}
	if view.Width != base.width || view.Height != base.height || view.Depth != base.depth {
		return cudaerr.InvalidValue, fmt.Sprintf("resource view of %d×%d×%d: a view keeps the array's %d×%d×%d", view.Width, view.Height, view.Depth,
			base.width, base.height, base.depth)
	}
	if mip == nil && (view.FirstMipmapLevel != 0 || view.LastMipmapLevel != 0) {
		return cudaerr.InvalidValue, "mipmap levels in a view of an array that is not mipmapped"
	}
	if view.FirstMipmapLevel > view.LastMipmapLevel || int(view.LastMipmapLevel) >= levels {
		return cudaerr.InvalidValue, fmt.Sprintf("view mipmap levels %d..%d of %d levels", view.FirstMipmapLevel, view.LastMipmapLevel, levels)
	}
	if base.flags&backend.ArrayLayered == 0 && (view.FirstLayer != 0 || view.LastLayer != 0) {
		return cudaerr.InvalidValue, "layers in a view of an array that is not layered"
	}
	if view.FirstLayer > view.LastLayer || base.flags&backend.ArrayLayered != 0 && uint64(view.LastLayer) >= base.depth {
		return cudaerr.InvalidValue, fmt.Sprintf("view layers %d..%d of %d layers", view.FirstLayer, view.LastLayer, base.depth)
	}
	return 0, ""
}
