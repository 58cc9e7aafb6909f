package isolate_test

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/isolate"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// CUDA arrays work on an isolated device: their handles cross to the worker, copies with Go
// slices go through the staging pool, and the runtime's refusals come back as they are.
func TestArraysOnAnIsolatedDevice(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev, err := device.Open(ctx, 0, device.WithSimulator(sim.New()), device.WithKernelCache(""),
		device.Isolated(isolate.WithStderr(io.Discard)))
	require.NoError(t, err)
	defer dev.Close()
	s := streams.Default(dev)

	f := cuda.Channels[int16](2)
	a, err := alloc.NewArray(ctx, dev, f, alloc.Extent{W: 5, H: 3, D: 2}, alloc.Layered(), alloc.SurfaceLoadStore())
	require.NoError(t, err)
	defer func() { require.NoError(t, a.Close(ctx)) }()
	info, err := a.Info(ctx)
	require.NoError(t, err)
	assert.Equal(t, alloc.ArrayInfo{Format: f, Extent: alloc.Extent{W: 5, H: 3, D: 2}, Flags: alloc.ArrayLayered | alloc.ArraySurfaceLoadStore}, info)

	in := make([]int16, 5*3*2*2)
	for i := range in {
		in[i] = int16(i*3 - 40)
	}
	require.NoError(t, alloc.CopyToArray(ctx, s, a, a.Whole(), in).Wait(ctx))
	m, err := alloc.NewMipmappedArray(ctx, dev, f, alloc.Extent{W: 10, H: 6, D: 2}, 2, alloc.Layered())
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close(ctx)) }()
	l1, err := m.Level(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, alloc.Extent{W: 5, H: 3, D: 2}, l1.Extent())
	require.NoError(t, alloc.CopyArray(ctx, s, l1, alloc.Pos{}, a, a.Whole()).Wait(ctx))
	buf, err := dev.MallocBytes(ctx, uint64(len(in))*2)
	require.NoError(t, err)
	defer func() { require.NoError(t, buf.Close(ctx)) }()
	require.NoError(t, alloc.CopyArrayToDevice(ctx, s, buf, l1, l1.Whole()).Wait(ctx))
	got := make([]int16, len(in))
	testdev.Read(t, ctx, got, buf)
	assert.Equal(t, in, got)

	_, err = alloc.NewArray(ctx, dev, f, alloc.Extent{W: 4, H: 3, D: 6}, alloc.Cubemap())
	require.ErrorIs(t, err, cudaerr.InvalidValue, "the worker's refusal comes back")
	_, err = a.MemoryRequirements(ctx)
	require.ErrorIs(t, err, cudaerr.InvalidValue)

	// Another isolated device's arrays live in another worker: no peer copy reaches them.
	other, err := device.Open(ctx, 0, device.WithSimulator(sim.New()), device.WithKernelCache(""),
		device.Isolated(isolate.WithStderr(io.Discard)))
	require.NoError(t, err)
	defer other.Close()
	b, err := alloc.NewArray(ctx, other, f, alloc.Extent{W: 5, H: 3, D: 2}, alloc.Layered())
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close(ctx)) }()
	err = alloc.CopyArray(ctx, s, b, alloc.Pos{}, a, a.Whole()).Wait(ctx)
	require.ErrorIs(t, err, device.ErrWrongDevice)
	testdev.RequireUsable(t, dev)
}
