package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

func TestPitchedRoundTrip(t *testing.T) {
	_, d0, _ := open(t)
	s := mkStream(t, d0)
	const w, h = 7, 5 // bytes per row, rows
	p, pitch, err := d0.MallocPitch(w, h)
	require.NoError(t, err)
	t.Cleanup(func() { _ = d0.Free(p) })
	assert.Equal(t, uint64(pitchAlign), pitch)

	src := make([]byte, w*h)
	for i := range src {
		src[i] = byte(i + 1)
	}
	require.NoError(t, d0.Copy2DHtoD(p, pitch, hostPtr(src), w, w, h, s))
	require.NoError(t, d0.Memset2D(p+2, pitch, 0xee, 3, 2, s)) // columns 2..4 of rows 0..1
	q, qpitch, err := d0.MallocPitch(w, h)
	require.NoError(t, err)
	t.Cleanup(func() { _ = d0.Free(q) })
	require.NoError(t, d0.Copy2DDtoD(q, qpitch, p, pitch, w, h, s))
	got := make([]byte, w*h)
	require.NoError(t, d0.Copy2DDtoH(hostPtr(got), w, q, qpitch, w, h, s))
	require.NoError(t, d0.StreamSynchronize(s))

	want := append([]byte(nil), src...)
	for y := 0; y < 2; y++ {
		for x := 2; x < 5; x++ {
			want[y*w+x] = 0xee
		}
	}
	assert.Equal(t, want, got)

	// The padding between rows is untouched by a 2D copy: read the whole pitched span.
	whole := make([]byte, pitch*h)
	require.NoError(t, d0.CopyDtoH(hostPtr(whole), q, pitch*h, s))
	for y := 0; y < h; y++ {
		assert.Equal(t, want[y*w:(y+1)*w], whole[uint64(y)*qpitch:uint64(y)*qpitch+w], "row %d", y)
	}
}

func TestPitchedBadInput(t *testing.T) {
	_, d0, d1 := open(t)
	s := mkStream(t, d0)
	p, pitch, err := d0.MallocPitch(16, 4)
	require.NoError(t, err)
	foreign, fpitch, err := d1.MallocPitch(16, 4)
	require.NoError(t, err)
	host := make([]byte, 4096)
	hp := hostPtr(host)

	cases := []struct {
		name string
		call func() error
		code cudaerr.Code
		want string
	}{
		{"row wider than pitch", func() error { return d0.Copy2DDtoD(p, 8, p, pitch, 16, 2, s) }, cudaerr.InvalidPitchValue, "pitch of 8"},
		{"rows past the end", func() error { return d0.Copy2DDtoD(p, pitch, p, pitch, 16, 5, s) }, cudaerr.InvalidValue, "past the end"},
		{"overflowing span", func() error { return d0.Memset2D(p, 1<<62, 0, 1, 8, s) }, cudaerr.InvalidValue, "overflow"},
		{"HtoD past the end", func() error { return d0.Copy2DHtoD(p+backend.DevicePtr(pitch), pitch, hp, 16, 16, 4, s) }, cudaerr.InvalidValue, "past the end"},
		{"HtoD nil host", func() error { return d0.Copy2DHtoD(p, pitch, nil, 16, 16, 4, s) }, cudaerr.InvalidValue, "nil host"},
		{"DtoH foreign", func() error { return d0.Copy2DDtoH(hp, 16, foreign, fpitch, 16, 4, s) }, cudaerr.InvalidValue, "device 1"},
		{"memset past the end", func() error { return d0.Memset2D(p, pitch, 1, 16, 5, s) }, cudaerr.InvalidValue, "past the end"},
		{"width over max pitch", func() error { _, _, err := d0.MallocPitch(1<<31, 1); return err }, cudaerr.InvalidValue, "maximum pitch"},
	}
	for _, c := range cases {
		requireCode(t, c.call(), c.code, c.name)
		assert.Contains(t, c.call().Error(), c.want, c.name)
	}
	require.NoError(t, d0.StreamSynchronize(s), "the device stays usable")
	z, zp, err := d0.MallocPitch(0, 3)
	require.NoError(t, err)
	assert.Zero(t, z)
	assert.Zero(t, zp)
}
