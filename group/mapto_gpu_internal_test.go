package group

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/interop"
)

// TestMapToOverEveryDevice gathers shards from every device of the machine into each device's
// memory in turn (testdev.SimDevices devices on the simulator; every GPU on the cuda backend),
// so that every ordered pair of devices carries results once. Where a device can reach the
// destination directly (NVLinked GPUs), its shards travel as peer copies: the group has asked
// for, and enabled, that link, and only links into a destination are asked.
func TestMapToOverEveryDevice(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		devs, err := device.OpenAll(ctx, opts...)
		require.NoError(t, err)
		g, err := New(ctx, devs)
		require.NoError(t, err)
		t.Cleanup(func() {
			require.NoError(t, g.Close(context.Background()))
			for _, d := range devs {
				require.NoError(t, d.Close())
			}
		})
		const n = 1 << 18
		items := make([]uint32, n)
		for i := range items {
			items[i] = uint32(i) * 3
		}
		destinations := map[*device.Device]bool{}
		for _, to := range devs {
			dst, err := to.MallocBytes(ctx, 4*n)
			require.NoError(t, err)
			require.NoError(t, MapTo[uint32](ctx, g, dst, items, 4*len(devs), doubled))
			for i, v := range readU32(t, ctx, dst, n) {
				if v != 6*uint32(i) {
					t.Fatalf("into device %d: value %d is %d, want %d", to.Ordinal(), i, v, 6*uint32(i))
				}
			}
			require.NoError(t, dst.Close(ctx))
			destinations[to] = true

			links := 0
			g.peers.Range(func(k, v any) bool {
				key := k.([2]*device.Device)
				require.True(t, destinations[key[1]], "only links into a destination's device are asked")
				if key[1] == to && v.(bool) {
					links++
				}
				return true
			})
			want := 0 // the devices that can reach the destination directly: the simulator links every pair
			for _, d := range devs {
				if d == to {
					continue
				}
				ok, err := interop.CanAccessPeer(ctx, d, to)
				require.NoError(t, err)
				if ok {
					want++
				}
			}
			t.Logf("into device %d: %d of %d other devices linked", to.Ordinal(), links, len(devs)-1)
			require.Equal(t, want, links, "a peer copy from every device that can reach device %d", to.Ordinal())
		}
	})
}
