package core

import "github.com/gpuactor/gpuactor/internal/backend"

// Lent arrays are arrays the runtime lends for a while rather than allocates: the arrays of
// a mapped graphics resource (a GL texture, an EGL image), valid until it is unmapped. They
// are ordinary Arrays to copies, textures and surfaces, but their Close is refused (what lends
// them frees them), and Revoke makes every later use an ErrClosed error.

// LendArray makes an Array of d over h, which lender (a phrase for errors: "a mapped graphics
// resource") lends, described by info. Actor thread only.
func (d *Device) LendArray(h backend.Array, info backend.ArrayInfo, lender string) *Array {
	return &Array{dev: d, h: h, info: info, lent: lender}
}

// LendMipmappedArray makes a MipmappedArray of d over h of levels levels, which lender lends.
// Actor thread only.
func (d *Device) LendMipmappedArray(h backend.MipmappedArray, info backend.ArrayInfo, levels int, lender string) *MipmappedArray {
	return &MipmappedArray{dev: d, h: h, info: info, levels: make([]*Array, max(levels, 1)), lent: lender}
}

// Revoke ends the loan of a lent array: every later use is an ErrClosed error.
func (a *Array) Revoke() { a.closed.Store(true) }

// Revoke ends the loan of a lent mipmapped array and its levels.
func (m *MipmappedArray) Revoke() { m.closed.Store(true) }
