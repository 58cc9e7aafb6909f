package device_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// On an isolated device pinned memory is shared between the caller and the worker, so a
// kernel in the worker writes it through its device address and the caller sees the writes:
// zero copy crosses the process boundary. Managed memory, whose host side would be the
// worker's, is refused, naming why.
func TestIsolatedMappedPinnedAndManaged(t *testing.T) {
	isolatedBackends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		mod, err := dev.Compile(ctx, device.Source{Name: "add.cu", Code: testdev.AddU32, Sim: map[string]cuda.SimKernel{"add_u32": testdev.AddU32Sim}})
		require.NoError(t, err)
		k, err := mod.Kernel(ctx, "add_u32")
		require.NoError(t, err)

		for _, flags := range [][]alloc.PinnedFlag{nil, {alloc.Mapped}, {alloc.Mapped, alloc.Portable, alloc.WriteCombined}} {
			p, err := alloc.MallocPinned[uint32](ctx, dev, 1024, flags...)
			require.NoError(t, err)
			var want alloc.PinnedFlag
			for _, f := range flags {
				want |= f
			}
			got, err := p.Flags(ctx)
			require.NoError(t, err)
			require.Equal(t, want, got&want, "flags asked for are reported")
			for i := range p.Host() {
				p.Host()[i] = uint32(i)
			}
			dp, err := p.DevicePtr(ctx)
			require.NoError(t, err)
			err = streams.Default(dev).Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(4), Block: cuda.Dim(256)}, dp, uint32(9), int32(1024)).Wait(ctx)
			require.NoError(t, err)
			for i, v := range p.Host() {
				require.Equal(t, uint32(i)+9, v, "element %d, flags %#x", i, want)
			}
			require.NoError(t, p.Close(ctx))
		}

		_, err = alloc.MallocManaged[float32](ctx, dev, 1024)
		require.ErrorIs(t, err, cudaerr.NotSupported)
		assert.Contains(t, err.Error(), "isolated device")
		assert.Contains(t, err.Error(), "worker's process only")
		testdev.RequireUsable(t, dev)
	})
}
