//go:build linux

package remote_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unsafe"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// arrayParityMethods are the backend.Device methods arrayParity covers.
var arrayParityMethods = []string{"MallocArray", "Malloc3DArray", "FreeArray", "ArrayInfo", "ChannelDesc", "ArrayPlane",
	"MallocMipmappedArray", "MipmappedArrayLevel", "FreeMipmappedArray", "ArrayMemoryRequirements",
	"MipmappedArrayMemoryRequirements", "ArraySparseProperties", "MipmappedArraySparseProperties",
	"Copy3D", "Copy3DPeer", "Copy2DToArray", "Copy2DFromArray", "Memset3D"}

// arrayParity moves bytes host → device → 2D array → 3D array → mipmap level → pitched memory
// → host, through every array call, and returns what each described along the way.
func arrayParity(dv backend.Device, st *pstate) (any, error) {
	var out []any
	keep := func(v any, err error) error {
		out = append(out, v)
		return err
	}
	f := cuda.Channels[uint16](2)
	a, err := dv.MallocArray(f, 4, 3, backend.ArraySurfaceLoadStore)
	if err != nil {
		return nil, err
	}
	defer func() { _ = dv.FreeArray(a) }()
	b, err := dv.Malloc3DArray(f, backend.Extent3D{Width: 4, Height: 3, Depth: 2}, backend.ArraySparse)
	if err != nil {
		return nil, err
	}
	defer func() { _ = dv.FreeArray(b) }()
	m, err := dv.MallocMipmappedArray(f, backend.Extent3D{Width: 8, Height: 6}, 2, backend.ArrayDeferredMapping|backend.ArraySparse)
	if err != nil {
		return nil, err
	}
	defer func() { _ = dv.FreeMipmappedArray(m) }()
	l1, err := dv.MipmappedArrayLevel(m, 1)
	if err != nil {
		return nil, err
	}
	for _, step := range []func() error{
		func() error { return keep(dv.ArrayInfo(b)) },
		func() error { return keep(dv.ChannelDesc(a)) },
		func() error { _, err := dv.ArrayPlane(a, 0); return keep(errText(err), nil) },
		func() error { return keep(dv.ArrayInfo(l1)) },
		func() error { return keep(dv.ArraySparseProperties(b)) },
		func() error { return keep(dv.MipmappedArraySparseProperties(m)) },
		func() error { return keep(dv.MipmappedArrayMemoryRequirements(m)) },
		func() error { _, err := dv.ArrayMemoryRequirements(a); return keep(errText(err), nil) },
	} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	p, err := dv.Malloc(256)
	if err != nil {
		return nil, err
	}
	defer func() { _ = dv.Free(p) }()
	buf := unsafe.Slice((*byte)(st.hp), 256)
	for i := range buf[:48] {
		buf[i] = byte(i*3 + 1)
	}
	ext := backend.Extent3D{Width: 4, Height: 3, Depth: 1}
	calls := []func() error{
		func() error { return dv.CopyHtoD(p, st.hp, 48, st.s) },
		func() error { return dv.Copy2DToArray(a, 0, 0, p, 16, 16, 3, st.s) },
		func() error {
			return dv.Copy3D(backend.Copy3DParams{Src: backend.Place3D{Array: a}, Dst: backend.Place3D{Array: b, Pos: backend.Pos3D{Z: 1}}, Extent: ext}, st.s)
		},
		func() error {
			return dv.Copy3DPeer(backend.Copy3DParams{Src: backend.Place3D{Array: b, Pos: backend.Pos3D{Z: 1}}, Dst: backend.Place3D{Array: l1}, Extent: ext}, dv.Ordinal(), dv.Ordinal(), st.s)
		},
		func() error {
			return dv.Memset3D(p+64, 32, 3, 0x5a, backend.Extent3D{Width: 32, Height: 3, Depth: 1}, st.s)
		},
		func() error { return dv.Copy2DFromArray(p+64, 32, l1, 4, 1, 8, 2, st.s) },
		func() error { return dv.StreamSynchronize(st.s) },
		func() error { clear(buf[:128]); return dv.CopyDtoH(st.hp, p+64, 96, st.s) },
		func() error { return dv.StreamSynchronize(st.s) },
	}
	for _, c := range calls {
		if err := c(); err != nil {
			return nil, err
		}
	}
	out = append(out, append([]byte(nil), buf[:96]...))
	if err := dv.FreeArray(l1); err != nil {
		out = append(out, errText(err))
	}
	return out, nil
}

// TestArrayParityStepMovesTheBytes runs arrayParity in process and checks its answer, so the
// parity step cannot agree on a failure on both sides.
func TestArrayParityStepMovesTheBytes(t *testing.T) {
	dv, err := newSim().Open(0)
	require.NoError(t, err)
	st := &pstate{}
	st.s, err = dv.StreamCreate(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	st.hp, err = dv.HostAlloc(4096, backend.HostAllocMapped)
	require.NoError(t, err)
	v, err := arrayParity(dv, st)
	require.NoError(t, err)
	out := v.([]any)
	assert.Equal(t, backend.ArrayInfo{Format: cuda.Channels[uint16](2), Extent: backend.Extent3D{Width: 4, Height: 3, Depth: 2}, Flags: backend.ArraySparse}, out[0])
	assert.Equal(t, backend.ArrayInfo{Format: cuda.Channels[uint16](2), Extent: backend.Extent3D{Width: 4, Height: 3}, Flags: backend.ArrayDeferredMapping | backend.ArraySparse}, out[3])
	assert.NotEmpty(t, out[2], "ArrayPlane is refused")
	// Level 1 (4×3) holds the 4×3 elements of 4 bytes; rows 1 and 2, elements 1 and 2, land
	// at byte 4 of rows 32 bytes apart, the rest of the memset rows stay 0x5a.
	got := out[len(out)-2].([]byte)
	src := make([]byte, 48)
	for i := range src {
		src[i] = byte(i*3 + 1)
	}
	want := make([]byte, 96)
	for i := range want {
		want[i] = 0x5a
	}
	for y := range 2 {
		copy(want[y*32+0:y*32+8], src[(1+y)*16+4:(1+y)*16+12])
	}
	assert.Equal(t, want, got)
	assert.Contains(t, out[len(out)-1], "mipmapped", "a level is not freed alone")
}
