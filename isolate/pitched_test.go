package isolate_test

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/isolate"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// Pitched arrays work on an isolated device: allocation, box copies each way through the
// staging pool, device-to-device box copies and memsets.
func TestPitchedOnAnIsolatedDevice(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev, err := device.Open(ctx, 0, device.WithSimulator(sim.New()), device.WithKernelCache(""),
		device.Isolated(isolate.WithStderr(io.Discard)))
	require.NoError(t, err)
	defer dev.Close()
	s := streams.Default(dev)

	const w, h, d = 11, 3, 2
	v, err := alloc.Malloc3D[int32](ctx, dev, w, h, d)
	require.NoError(t, err)
	defer func() { require.NoError(t, v.Close(ctx)) }()
	in := make([]int32, w*h*d)
	for i := range in {
		in[i] = int32(i) - 7
	}
	require.NoError(t, alloc.CopyToPitched(ctx, s, v, v.Whole(), in).Wait(ctx))
	require.NoError(t, alloc.MemsetPitched(ctx, s, v, alloc.Box{Pos: alloc.Pos{Y: 2, Z: 1}, W: w, H: 1}, 0).Wait(ctx))
	u, err := alloc.Malloc3D[int32](ctx, dev, w, h, d)
	require.NoError(t, err)
	defer func() { require.NoError(t, u.Close(ctx)) }()
	require.NoError(t, alloc.CopyPitched(ctx, s, u, alloc.Pos{}, v, v.Whole()).Wait(ctx))

	want := append([]int32(nil), in...)
	clear(want[(1*h+2)*w : (1*h+3)*w])
	got := make([]int32, w*h*d)
	require.NoError(t, alloc.CopyFromPitched(ctx, s, got, u, u.Whole()).Wait(ctx))
	assert.Equal(t, want, got)

	err = alloc.CopyToPitched(ctx, s, v, v.Whole(), in[:5]).Wait(ctx)
	require.ErrorIs(t, err, device.ErrInvalidArgument)
	testdev.RequireUsable(t, dev)
}
