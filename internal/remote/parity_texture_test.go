//go:build linux

package remote_test

import (
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// textureParityMethods are the texture object calls textureParity covers: descriptors cross as
// plain structs, objects as handles.
var textureParityMethods = []string{"CreateTextureObject", "TextureObjectResourceDesc", "TextureObjectTextureDesc",
	"TextureObjectViewDesc", "DestroyTextureObject", "Texture1DLinearMaxWidth"}

func textureParity(dv backend.Device, st *pstate) (any, error) {
	p, err := dv.Malloc(4096)
	if err != nil {
		return nil, err
	}
	defer func() { _ = dv.Free(p) }()
	res := backend.ResourceDesc{Type: backend.ResourcePitch2D, Ptr: p, Format: cuda.Channels[uint8](4), Width: 8, Height: 4, Pitch: 64}
	desc := backend.TextureDesc{AddressX: backend.AddressBorder, AddressY: backend.AddressMirror, Filter: backend.FilterLinear,
		Read: backend.ReadNormalizedFloat, SRGB: 1, BorderR: 0.25, BorderA: 1, Normalized: 1, MaxAnisotropy: 2}
	tex, err := dv.CreateTextureObject(res, desc, backend.ResourceViewDesc{})
	if err != nil {
		return nil, err
	}
	gotRes, err1 := dv.TextureObjectResourceDesc(tex)
	gotDesc, err2 := dv.TextureObjectTextureDesc(tex)
	_, err3 := dv.TextureObjectViewDesc(tex) // undefined without a view: only the error is compared
	_, badPitch := dv.CreateTextureObject(backend.ResourceDesc{Type: backend.ResourcePitch2D, Ptr: p, Format: res.Format, Width: 8, Height: 4, Pitch: 40},
		desc, backend.ResourceViewDesc{})
	w, err4 := dv.Texture1DLinearMaxWidth(cuda.Channels[float32](2))
	_, badFormat := dv.Texture1DLinearMaxWidth(cuda.ChannelFormat{X: 8, Y: 16, Kind: cuda.ChannelFloat})
	destroyed := dv.DestroyTextureObject(tex)
	return []any{tex, gotRes, gotDesc, errText(err1), errText(err2), errText(err3), errText(badPitch), w, errText(err4),
		errText(badFormat), errText(destroyed), errText(dv.DestroyTextureObject(tex))}, nil
}

// surfaceParityMethods are the surface object calls surfaceParity covers.
var surfaceParityMethods = []string{"CreateSurfaceObject", "SurfaceObjectResourceDesc", "DestroySurfaceObject"}

func surfaceParity(dv backend.Device, st *pstate) (any, error) {
	_, notArray := dv.CreateSurfaceObject(backend.ResourceDesc{Type: backend.ResourceLinear, Ptr: st.p, Format: cuda.Channels[float32](1), Size: 64})
	_, noArray := dv.CreateSurfaceObject(backend.ResourceDesc{Type: backend.ResourceArray, Array: 0x77})
	_, gone := dv.SurfaceObjectResourceDesc(0x1234)
	return []any{errText(notArray), errText(noArray), errText(gone), errText(dv.DestroySurfaceObject(0x1234))}, nil
}
