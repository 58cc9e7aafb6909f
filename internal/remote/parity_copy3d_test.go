//go:build linux

package remote_test

import (
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Parity step of the 3D copy nodes (backend.GraphCopy3DDevice), after the array step.
func init() {
	step := struct {
		name   string
		covers []string
		run    func(dv backend.Device, st *pstate) (any, error)
	}{"GraphCopy3D", []string{"GraphAddMemcpyNode3D", "GraphMemcpyNodeGetParams3D", "GraphMemcpyNodeSetParams3D",
		"GraphExecMemcpyNodeSetParams3D"}, copy3DNodeParity}
	i := slices.IndexFunc(paritySteps, func(s struct {
		name   string
		covers []string
		run    func(dv backend.Device, st *pstate) (any, error)
	}) bool {
		return s.name == "Arrays"
	})
	paritySteps = slices.Insert(paritySteps, i+1, step)
}

// copy3DNodeParity copies 3 rows of 16 bytes of device memory into a 4×3 array of 4-byte
// elements and back out into rows 32 bytes apart, through a graph of two 3D copy nodes (the
// second moved by a Node parameter change), beside a one-row copy an Exec parameter change
// moves; it returns the parameters read back, the refused calls' errors and the bytes that
// arrived.
func copy3DNodeParity(dv backend.Device, st *pstate) (any, error) {
	var out []any
	a, err := dv.MallocArray(cuda.Channels[uint16](2), 4, 3, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = dv.FreeArray(a) }()
	p, err := dv.Malloc(512)
	if err != nil {
		return nil, err
	}
	defer func() { _ = dv.Free(p) }()
	g, err := dv.GraphCreate()
	if err != nil {
		return nil, err
	}
	defer func() { _ = dv.GraphDestroy(g) }()
	ext := backend.Extent3D{Width: 4, Height: 3, Depth: 1}
	in := backend.Copy3DParams{Src: backend.Place3D{Ptr: p + 256, Pitch: 16, Rows: 3}, Dst: backend.Place3D{Array: a}, Extent: ext}
	up, err := dv.GraphAddMemcpyNode3D(g, nil, in)
	if err != nil {
		return nil, err
	}
	// Added writing the wrong rows, then set to the right ones.
	outP := backend.Copy3DParams{Src: backend.Place3D{Array: a}, Dst: backend.Place3D{Ptr: p, Pitch: 32, Rows: 3}, Extent: ext}
	down, err := dv.GraphAddMemcpyNode3D(g, []backend.GraphNode{up}, outP)
	if err != nil {
		return nil, err
	}
	outP.Dst.Ptr = p + 64
	if err := dv.GraphMemcpyNodeSetParams3D(down, outP); err != nil {
		return nil, err
	}
	got, err := dv.GraphMemcpyNodeGetParams3D(down)
	if err != nil {
		return nil, err
	}
	out = append(out, got.Dst.Ptr-p, got.Dst.Pitch, got.Src.Array == a, got.Extent)
	_, err = dv.GraphAddMemcpyNode3D(g, nil, backend.Copy3DParams{Src: backend.Place3D{Array: a, Pos: backend.Pos3D{X: 1}}, Dst: backend.Place3D{Ptr: p, Pitch: 32, Rows: 3}, Extent: ext})
	out = append(out, errText(err))
	oneRow := func(src, dst backend.DevicePtr) backend.Copy3DParams {
		return backend.Copy3DParams{Src: backend.Place3D{Ptr: src, Pitch: 16, Rows: 1}, Dst: backend.Place3D{Ptr: dst, Pitch: 16, Rows: 1},
			Extent: backend.Extent3D{Width: 16, Height: 1, Depth: 1}}
	}
	row, err := dv.GraphAddMemcpyNode3D(g, nil, oneRow(p+320, p+400))
	if err != nil {
		return nil, err
	}
	x, err := dv.GraphInstantiate(g, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = dv.GraphExecDestroy(x) }()
	// An Exec takes 1D copies only: the box copy is refused, the row copy moves.
	in.Src.Ptr = p
	out = append(out, errText(dv.GraphExecMemcpyNodeSetParams3D(x, up, in)))
	if err := dv.GraphExecMemcpyNodeSetParams3D(x, row, oneRow(p+336, p+400)); err != nil {
		return nil, err
	}
	buf := unsafe.Slice((*byte)(st.hp), 512)
	for i := range buf {
		buf[i] = byte(i*5 + 2)
	}
	for _, c := range []func() error{
		func() error { return dv.CopyHtoD(p, st.hp, 512, st.s) },
		func() error { return dv.Memset(p+64, 0x11, 96, st.s) },
		func() error { return dv.GraphLaunch(x, st.s) },
		func() error { return dv.StreamSynchronize(st.s) },
		func() error { clear(buf); return dv.CopyDtoH(st.hp, p, 512, st.s) },
		func() error { return dv.StreamSynchronize(st.s) },
	} {
		if err := c(); err != nil {
			return nil, err
		}
	}
	return append(out, slices.Clone(buf[64:160]), slices.Clone(buf[400:416])), nil
}

// TestCopy3DNodeParityStepMovesTheBytes runs copy3DNodeParity in process and checks its
// answer, so the parity step cannot agree on a failure on both sides.
func TestCopy3DNodeParityStepMovesTheBytes(t *testing.T) {
	dv, err := newSim().Open(0)
	require.NoError(t, err)
	st := &pstate{}
	st.s, err = dv.StreamCreate(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	st.hp, err = dv.HostAlloc(4096, backend.HostAllocMapped)
	require.NoError(t, err)
	v, err := copy3DNodeParity(dv, st)
	require.NoError(t, err)
	out := v.([]any)
	assert.Equal(t, backend.DevicePtr(64), out[0])
	assert.Equal(t, uint64(32), out[1])
	assert.Equal(t, true, out[2])
	assert.Equal(t, backend.Extent3D{Width: 4, Height: 3, Depth: 1}, out[3])
	assert.NotEmpty(t, out[4], "a box past the array's edge is refused")
	assert.NotEmpty(t, out[5], "an Exec's box copy cannot change")
	want := make([]byte, 96)
	for i := range want {
		want[i] = 0x11
	}
	for y := range 3 {
		for i := range 16 {
			want[y*32+i] = byte((256+y*16+i)*5 + 2)
		}
	}
	assert.Equal(t, want, out[6], "the box went through the array from byte 256")
	row := make([]byte, 16)
	for i := range row {
		row[i] = byte((336+i)*5 + 2)
	}
	assert.Equal(t, row, out[7], "the Exec's row copy read from byte 336")
}
