package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// With an array in a 3D copy, the pitched side's X is in the array's elements, as the GPU
// reads it: X 2 of 4-byte elements is byte 8 of the row, both ways.
func TestPitchedColumnIsInArrayElements(t *testing.T) {
	_, d0, _ := open(t)
	s := mkStream(t, d0)
	a, err := d0.MallocArray(cuda.Channels[uint16](2), 4, 2, 0)
	require.NoError(t, err)
	defer func() { require.NoError(t, d0.FreeArray(a)) }()
	r := ramp(32)
	in := upload(t, d0, s, r)
	require.NoError(t, d0.Copy3D(backend.Copy3DParams{Src: backend.Place3D{Ptr: in, Pitch: 16, Rows: 2}, Dst: backend.Place3D{Array: a},
		Extent: backend.Extent3D{Width: 4, Height: 2, Depth: 1}}, s))

	out := malloc(t, d0, 64)
	require.NoError(t, d0.Memset3D(out, 32, 2, 0xee, backend.Extent3D{Width: 32, Height: 2, Depth: 1}, s))
	require.NoError(t, d0.Copy3D(backend.Copy3DParams{
		Src:    backend.Place3D{Array: a, Pos: backend.Pos3D{X: 1}},
		Dst:    backend.Place3D{Ptr: out, Pitch: 32, Rows: 2, Pos: backend.Pos3D{X: 2, Y: 1}},
		Extent: backend.Extent3D{Width: 2, Height: 1, Depth: 1}}, s))
	want := make([]byte, 64)
	for i := range want {
		want[i] = 0xee
	}
	copy(want[32+8:32+16], r[4:12])
	assert.Equal(t, want, download(t, d0, s, out, 64))

	// And back: from byte 8 of row 1 of out into element 2 of row 0 of the array.
	require.NoError(t, d0.Copy3D(backend.Copy3DParams{
		Src:    backend.Place3D{Ptr: out, Pitch: 32, Rows: 2, Pos: backend.Pos3D{X: 2, Y: 1}},
		Dst:    backend.Place3D{Array: a, Pos: backend.Pos3D{X: 2}},
		Extent: backend.Extent3D{Width: 2, Height: 1, Depth: 1}}, s))
	back := malloc(t, d0, 32)
	require.NoError(t, d0.Copy3D(backend.Copy3DParams{Src: backend.Place3D{Array: a}, Dst: backend.Place3D{Ptr: back, Pitch: 16, Rows: 2},
		Extent: backend.Extent3D{Width: 4, Height: 2, Depth: 1}}, s))
	want = append([]byte(nil), r...)
	copy(want[8:16], r[4:12])
	assert.Equal(t, want, download(t, d0, s, back, 32))

	// A column whose bytes run past the pitch is the runtime's pitch error.
	err = d0.Copy3D(backend.Copy3DParams{
		Src:    backend.Place3D{Array: a},
		Dst:    backend.Place3D{Ptr: out, Pitch: 32, Rows: 2, Pos: backend.Pos3D{X: 7}},
		Extent: backend.Extent3D{Width: 2, Height: 1, Depth: 1}}, s)
	code, ok := cudaerr.CodeOf(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, cudaerr.InvalidPitchValue, code)
	require.NoError(t, d0.StreamSynchronize(s))
}
