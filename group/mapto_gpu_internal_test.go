package group

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/interop"
)

// TestMapToOverEveryDevice gathers shards from every device of the machine into device 0's
// memory (two devices on the simulator; every GPU on the cuda backend). Where another device
// can reach device 0 directly (two NVLinked GPUs), its shards travel as peer copies: the
// group has asked for, and enabled, that link.
func TestMapToOverEveryDevice(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		devs, err := device.OpenAll(ctx, opts...)
		require.NoError(t, err)
		g, err := New(ctx, devs)
		require.NoError(t, err)
		t.Cleanup(func() {
			require.NoError(t, g.Close())
			for _, d := range devs {
				require.NoError(t, d.Close())
			}
		})
		const n = 1 << 20
		items := make([]uint32, n)
		for i := range items {
			items[i] = uint32(i) * 3
		}
		dst, err := devs[0].Malloc(ctx, 4*n)
		require.NoError(t, err)
		defer func() { require.NoError(t, dst.Close(ctx)) }()
		require.NoError(t, MapTo[uint32](ctx, g, dst, items, 4*len(devs), doubled))
		for i, v := range readU32(t, ctx, dst, n) {
			if v != 6*uint32(i) {
				t.Fatalf("value %d is %d, want %d", i, v, 6*uint32(i))
			}
		}
		links := 0
		g.peers.Range(func(k, v any) bool {
			key := k.([2]*device.Device)
			require.Same(t, devs[0], key[1], "only links into the destination's device are asked")
			if v.(bool) {
				links++
			}
			return true
		})
		t.Logf("%d devices, %d of them linked to device 0", len(devs), links)
		want := 0 // the devices that can reach device 0 directly: the simulator links every pair
		for _, d := range devs[1:] {
			ok, err := interop.CanAccessPeer(ctx, d, devs[0])
			require.NoError(t, err)
			if ok {
				want++
			}
		}
		require.Equal(t, want, links, "a peer copy from every device that can reach device 0")
	})
}
