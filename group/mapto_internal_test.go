package group

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// doubled is a DeviceShard: the shard's values times two, in fresh memory of d.
func doubled(ctx context.Context, d *device.Device, s *streams.Stream, shard []uint32) (ShardResult, error) {
	buf, err := d.MallocBytes(ctx, uint64(4*len(shard)))
	if err != nil {
		return nil, err
	}
	v := make([]uint32, len(shard))
	for i, x := range shard {
		v[i] = 2 * x
	}
	return buf, streams.CopyToDevice(ctx, s, buf, v).Wait(ctx)
}

func openEight(t *testing.T) ([]*device.Device, *Group) {
	t.Helper()
	devs, err := device.OpenAll(context.Background(),
		device.WithSimulator(sim.New(sim.WithDevices(8))),
		device.WithKernelCache(""),
		device.WithActorTuning(device.ActorTuning{Spin: device.NoSpin, BusySpin: device.NoSpin, AwaitSpin: device.NoSpin}))
	require.NoError(t, err)
	g, err := New(context.Background(), devs)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, g.Close(context.Background()))
		for _, d := range devs {
			_ = d.Close()
		}
	})
	return devs, g
}

func readU32(t *testing.T, ctx context.Context, m device.Mem, n int) []uint32 {
	t.Helper()
	got := make([]uint32, n)
	require.NoError(t, streams.CopyFromDevice(ctx, streams.Default(device.Range(m, 0, 0).Buffer().Device()), got, m).Wait(ctx))
	return got
}

// TestMapToGathersOverLinks: on eight simulated devices, every one linked to every other,
// shards on other devices than the destination's copy over the link, peer access enabled once
// per pair; the results land in order.
func TestMapToGathersOverLinks(t *testing.T) {
	ctx := context.Background()
	devs, g := openEight(t)
	const n = 10000
	items := make([]uint32, n)
	for i := range items {
		items[i] = uint32(i)
	}
	dst, err := devs[3].MallocBytes(ctx, 4*n)
	require.NoError(t, err)
	require.NoError(t, MapTo[uint32](ctx, g, dst, items, 0, doubled))
	got := readU32(t, ctx, dst, n)
	for i, v := range got {
		require.Equal(t, uint32(2*i), v, "value %d", i)
	}
	links := 0
	g.peers.Range(func(k, v any) bool {
		key := k.([2]*device.Device)
		require.Same(t, devs[3], key[1], "only links into the destination's device are asked")
		require.True(t, v.(bool))
		links++
		return true
	})
	require.Positive(t, links)
	require.LessOrEqual(t, links, 7)
}

// TestMapToStagesWithoutLink: where a pair has no link, results travel through host memory
// and land the same.
func TestMapToStagesWithoutLink(t *testing.T) {
	ctx := context.Background()
	devs, g := openEight(t)
	for _, d := range devs {
		g.peers.Store([2]*device.Device{d, devs[0]}, false)
	}
	const n = 999
	items := make([]uint32, n)
	for i := range items {
		items[i] = uint32(i + 1)
	}
	dst, err := devs[0].MallocBytes(ctx, 4*n+64)
	require.NoError(t, err)
	require.NoError(t, MapTo[uint32](ctx, g, dst, items, 32, doubled))
	got := readU32(t, ctx, device.Range(dst, 0, 4*n), n)
	for i, v := range got {
		require.Equal(t, uint32(2*(i+1)), v, "value %d", i)
	}
}

// TestMapToBadInput: what MapTo refuses, and a shard's failure.
func TestMapToBadInput(t *testing.T) {
	ctx := context.Background()
	devs, g := openEight(t)
	items := []uint32{1, 2, 3, 4}
	dst, err := devs[1].MallocBytes(ctx, 16)
	require.NoError(t, err)

	require.ErrorIs(t, MapTo[uint32](ctx, g, dst, items, 0, nil), device.ErrInvalidArgument)
	require.ErrorIs(t, MapTo[uint32](ctx, g, nil, items, 0, doubled), device.ErrInvalidArgument)
	err = MapTo[uint64](ctx, g, dst, items, 0, func(ctx context.Context, d *device.Device, s *streams.Stream, shard []uint32) (ShardResult, error) {
		return nil, nil
	})
	require.ErrorIs(t, err, device.ErrOutOfRange)
	require.ErrorContains(t, err, "4 values of 8 bytes into a 16-byte destination")
	err = MapTo[uint32](ctx, g, dst, items, 2, func(ctx context.Context, d *device.Device, s *streams.Stream, shard []uint32) (ShardResult, error) {
		return nil, nil
	})
	require.ErrorIs(t, err, device.ErrInvalidArgument)
	require.ErrorContains(t, err, "returned no memory")
	boom := errors.New("boom")
	err = MapTo[uint32](ctx, g, dst, items, 2, func(ctx context.Context, d *device.Device, s *streams.Stream, shard []uint32) (ShardResult, error) {
		if shard[0] == 3 {
			return nil, boom
		}
		return doubled(ctx, d, s, shard)
	})
	require.ErrorIs(t, err, boom)
	// A shard's memory smaller than its results.
	err = MapTo[uint32](ctx, g, dst, items, 1, func(ctx context.Context, d *device.Device, s *streams.Stream, shard []uint32) (ShardResult, error) {
		return d.MallocBytes(ctx, 4)
	})
	require.ErrorIs(t, err, device.ErrOutOfRange)

	require.NoError(t, MapTo[uint32](ctx, g, dst, items, 0, doubled)) // the group still works
	require.Equal(t, []uint32{2, 4, 6, 8}, readU32(t, ctx, dst, 4))
}
