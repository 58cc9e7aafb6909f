package textures

import (
	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// FromArray is the CUDA array a (alloc.NewArray): textures sample it with tex1D, tex2D or
// tex3D by its shape, tex1DLayered or tex2DLayered when it is layered, texCubemap or
// texCubemapLayered when it is a cubemap, in its own format; surfaces read and write it when it
// was made with alloc.SurfaceLoadStore.
func FromArray(a *alloc.Array) Resource {
	if a == nil {
		return Resource{err: invalid("FromArray of a nil array")}
	}
	return Resource{desc: backend.ResourceDesc{Type: backend.ResourceArray}, held: arrayHolder{(*core.Array)(a)}, flags: uint32(a.Flags())}
}

// FromMipmapped is the mipmapped array m (alloc.NewMipmappedArray): textures over it sample
// the level a fetch names (tex2DLod...), within Desc.MinMipmapLevelClamp and
// MaxMipmapLevelClamp, filtered between levels by Desc.MipmapFilter. Unnormalized coordinates
// are texels of the level read.
func FromMipmapped(m *alloc.MipmappedArray) Resource {
	if m == nil {
		return Resource{err: invalid("FromMipmapped of a nil mipmapped array")}
	}
	return Resource{desc: backend.ResourceDesc{Type: backend.ResourceMipmapped}, held: mipmappedHolder{(*core.MipmappedArray)(m)}}
}

type arrayHolder struct{ a *core.Array }

func (h arrayHolder) HeldHandle(d *core.Device) (uintptr, error) {
	x, err := h.a.Handle("texture resource", d)
	return uintptr(x), err
}

func (h arrayHolder) Closed() bool { return h.a.Closed() }

type mipmappedHolder struct{ m *core.MipmappedArray }

func (h mipmappedHolder) HeldHandle(d *core.Device) (uintptr, error) {
	x, err := h.m.Handle("texture resource", d)
	return uintptr(x), err
}

func (h mipmappedHolder) Closed() bool {
	_, err := h.m.Handle("texture resource", nil)
	return err != nil
}
