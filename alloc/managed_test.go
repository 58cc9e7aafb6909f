package alloc_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
)

// The host writes managed memory, prefetches it to the device, a kernel updates it, it is
// prefetched back and the host reads the result.
func TestManagedPrefetch(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.stream(t)
		const n = 1 << 16
		m, err := alloc.MallocManaged[uint32](f.ctx, f.dev, n)
		require.NoError(t, err)
		require.Equal(t, n, m.Len())
		host := m.Host()
		require.Len(t, host, n)
		for i := range host {
			host[i] = uint32(i)
		}
		require.Equal(t, uint64(n*4), f.dev.Stats().Memory.Managed.Bytes)

		await(t, f.ctx, m.Prefetch(f.ctx, s, alloc.OnDevice(f.dev)))
		a, err := m.Attributes(f.ctx)
		require.NoError(t, err)
		dev, ok := a.LastPrefetchLocation.Device()
		require.True(t, ok, "last prefetch %v", a.LastPrefetchLocation)
		require.Equal(t, f.dev.Ordinal(), dev)

		cfg := cuda.LaunchConfig{Grid: cuda.Dim(n / 256), Block: cuda.Dim(256)}
		await(t, f.ctx, s.Launch(f.ctx, f.add, cfg, m, uint32(3), int32(n)))
		await(t, f.ctx, m.Prefetch(f.ctx, s, alloc.Host()))
		a, err = m.Attributes(f.ctx)
		require.NoError(t, err)
		require.True(t, a.LastPrefetchLocation.IsHost(), "last prefetch %v", a.LastPrefetchLocation)
		for i, v := range m.Host() {
			require.Equal(t, uint32(i)+3, v, "element %d", i)
		}

		// Copies through the stream API see the same memory.
		out := make([]uint32, 8)
		testdev.Read(t, f.ctx, out, m)
		require.Equal(t, []uint32{3, 4, 5, 6, 7, 8, 9, 10}, out)

		require.NoError(t, m.Close(f.ctx))
		require.Nil(t, m.Host())
		require.Zero(t, f.dev.Stats().Memory.Managed.Count)
	})
}

func TestManagedAdviseAndAttach(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.stream(t)
		m, err := alloc.MallocManaged[float64](f.ctx, f.dev, 4096, alloc.AttachHost())
		require.NoError(t, err)
		defer m.Close(f.ctx)
		a, err := m.Attributes(f.ctx)
		require.NoError(t, err)
		require.False(t, a.ReadMostly)
		require.False(t, a.PreferredLocation.IsSet())

		require.NoError(t, m.Advise(f.ctx, alloc.SetReadMostly, alloc.Location{}))
		require.NoError(t, m.Advise(f.ctx, alloc.SetPreferredLocation, alloc.OnDevice(f.dev)))
		require.NoError(t, m.Advise(f.ctx, alloc.SetAccessedBy, alloc.OnDevice(f.dev)))
		a, err = m.Attributes(f.ctx)
		require.NoError(t, err)
		require.True(t, a.ReadMostly)
		dev, ok := a.PreferredLocation.Device()
		require.True(t, ok)
		require.Equal(t, f.dev.Ordinal(), dev)
		require.Equal(t, []alloc.Location{alloc.OnDevice(f.dev)}, a.AccessedBy)

		require.NoError(t, m.Advise(f.ctx, alloc.UnsetReadMostly, alloc.Location{}))
		require.NoError(t, m.Advise(f.ctx, alloc.UnsetPreferredLocation, alloc.Location{}))
		require.NoError(t, m.Advise(f.ctx, alloc.UnsetAccessedBy, alloc.OnDevice(f.dev)))
		a, err = m.Attributes(f.ctx)
		require.NoError(t, err)
		require.False(t, a.ReadMostly)
		require.False(t, a.PreferredLocation.IsSet())
		require.Empty(t, a.AccessedBy)

		await(t, f.ctx, m.Attach(f.ctx, s, alloc.AttachSingle))
		await(t, f.ctx, m.Attach(f.ctx, s, alloc.AttachGlobal))
	})
}

func TestManagedBadInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.stream(t)
		free, _, err := f.dev.MemInfo(f.ctx)
		require.NoError(t, err)
		_, err = alloc.MallocManaged[byte](f.ctx, f.dev, int(free+1<<30))
		require.ErrorIs(t, err, alloc.ErrOversubscribe)
		require.Zero(t, f.dev.Stats().Memory.Managed.Count)
		_, err = alloc.MallocManaged[byte](f.ctx, f.dev, 0)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, err = alloc.MallocManaged[[]int](f.ctx, f.dev, 1)
		require.ErrorIs(t, err, alloc.ErrElemType)

		m, err := alloc.MallocManaged[int32](f.ctx, f.dev, 64)
		require.NoError(t, err)
		err = m.Prefetch(f.ctx, s, alloc.Location{}).Wait(f.ctx)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		require.ErrorIs(t, m.Advise(f.ctx, alloc.SetPreferredLocation, alloc.Location{}), device.ErrInvalidArgument)
		require.ErrorIs(t, m.Advise(f.ctx, alloc.Advice(42), alloc.Host()), device.ErrInvalidArgument)
		err = m.Attach(f.ctx, s, alloc.Attachment(3)).Wait(f.ctx)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		require.NoError(t, m.Close(f.ctx))
		require.ErrorIs(t, m.Close(f.ctx), device.ErrClosed)
		err = m.Prefetch(f.ctx, s, alloc.Host()).Wait(f.ctx)
		require.ErrorIs(t, err, device.ErrClosed)
		_, err = m.Attributes(f.ctx)
		require.ErrorIs(t, err, device.ErrClosed)
		requireUsable(t, f, s)
	})
}
