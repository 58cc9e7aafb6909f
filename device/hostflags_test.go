package device_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
)

func TestHostBufferFlags(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := testdev.Open(t, ctx, opts)
		for _, flags := range [][]device.HostFlag{
			nil,
			{device.HostMapped},
			{device.HostPortable, device.HostWriteCombined},
		} {
			var want device.HostFlag
			for _, f := range flags {
				want |= f
			}
			h, err := dev.MallocPinnedBytes(ctx, 4096, flags...)
			require.NoError(t, err)
			got, err := h.Flags(ctx)
			require.NoError(t, err)
			assert.Equal(t, want, got&want, "every flag it was allocated with is reported")
			// Besides, the runtime may add HostMapped only (unified addressing maps all pinned
			// memory).
			assert.Zero(t, got&^want&^device.HostMapped, "allocated with %#x, reported %#x", want, got)
			require.NoError(t, h.Close(ctx))
			_, err = h.Flags(ctx)
			assert.ErrorIs(t, err, device.ErrClosed)
		}
		_, err := (*device.HostBuffer)(nil).Flags(ctx)
		assert.ErrorIs(t, err, device.ErrInvalidArgument)
	})
}
