package alloc_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testfix"
)

// The host writes managed memory, prefetches it to the device, a kernel updates it, it is
// prefetched back and the host reads the result.
func TestManagedPrefetch(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		const n = 1 << 16
		m, err := alloc.MallocManaged[uint32](f.Ctx, f.Dev, n)
		require.NoError(t, err)
		require.Equal(t, n, m.Len())
		host := m.Host()
		require.Len(t, host, n)
		for i := range host {
			host[i] = uint32(i)
		}
		require.Equal(t, uint64(n*4), f.Dev.Stats().Memory.Managed.Bytes)

		testfix.Await(t, f.Ctx, m.Prefetch(f.Ctx, s, alloc.OnDevice(f.Dev)))
		a, err := m.Attributes(f.Ctx)
		require.NoError(t, err)
		dev, ok := a.LastPrefetchLocation.Device()
		require.True(t, ok, "last prefetch %v", a.LastPrefetchLocation)
		require.Equal(t, f.Dev.Ordinal(), dev)

		cfg := cuda.LaunchConfig{Grid: cuda.Dim(n / 256), Block: cuda.Dim(256)}
		testfix.Await(t, f.Ctx, s.Launch(f.Ctx, f.add, cfg, m, uint32(3), int32(n)))
		testfix.Await(t, f.Ctx, m.Prefetch(f.Ctx, s, alloc.Host()))
		a, err = m.Attributes(f.Ctx)
		require.NoError(t, err)
		require.True(t, a.LastPrefetchLocation.IsHost(), "last prefetch %v", a.LastPrefetchLocation)
		for i, v := range m.Host() {
			require.Equal(t, uint32(i)+3, v, "element %d", i)
		}

		// Copies through the stream API see the same memory.
		out := make([]uint32, 8)
		testdev.Read(t, f.Ctx, out, m)
		require.Equal(t, []uint32{3, 4, 5, 6, 7, 8, 9, 10}, out)

		require.NoError(t, m.Close(f.Ctx))
		require.Nil(t, m.Host())
		require.Zero(t, f.Dev.Stats().Memory.Managed.Count)
	})
}

func TestManagedAdviseAndAttach(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		m, err := alloc.MallocManaged[float64](f.Ctx, f.Dev, 4096, alloc.AttachHost())
		require.NoError(t, err)
		defer m.Close(f.Ctx)
		a, err := m.Attributes(f.Ctx)
		require.NoError(t, err)
		require.False(t, a.ReadMostly)
		require.False(t, a.PreferredLocation.IsSet())

		require.NoError(t, m.Advise(f.Ctx, alloc.SetReadMostly, alloc.Location{}))
		require.NoError(t, m.Advise(f.Ctx, alloc.SetPreferredLocation, alloc.OnDevice(f.Dev)))
		require.NoError(t, m.Advise(f.Ctx, alloc.SetAccessedBy, alloc.OnDevice(f.Dev)))
		a, err = m.Attributes(f.Ctx)
		require.NoError(t, err)
		require.True(t, a.ReadMostly)
		dev, ok := a.PreferredLocation.Device()
		require.True(t, ok)
		require.Equal(t, f.Dev.Ordinal(), dev)
		require.Equal(t, []alloc.Location{alloc.OnDevice(f.Dev)}, a.AccessedBy)

		require.NoError(t, m.Advise(f.Ctx, alloc.UnsetReadMostly, alloc.Location{}))
		require.NoError(t, m.Advise(f.Ctx, alloc.UnsetPreferredLocation, alloc.Location{}))
		require.NoError(t, m.Advise(f.Ctx, alloc.UnsetAccessedBy, alloc.OnDevice(f.Dev)))
		a, err = m.Attributes(f.Ctx)
		require.NoError(t, err)
		require.False(t, a.ReadMostly)
		require.False(t, a.PreferredLocation.IsSet())
		require.Empty(t, a.AccessedBy)

		testfix.Await(t, f.Ctx, m.Attach(f.Ctx, s, alloc.AttachSingle))
		testfix.Await(t, f.Ctx, m.Attach(f.Ctx, s, alloc.AttachGlobal))
	})
}

func TestManagedBadInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		free, _, err := f.Dev.MemInfo(f.Ctx)
		require.NoError(t, err)
		_, err = alloc.MallocManaged[byte](f.Ctx, f.Dev, int(free+1<<30))
		require.ErrorIs(t, err, alloc.ErrOversubscribe)
		require.Zero(t, f.Dev.Stats().Memory.Managed.Count)
		_, err = alloc.MallocManaged[byte](f.Ctx, f.Dev, 0)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, err = alloc.MallocManaged[[]int](f.Ctx, f.Dev, 1)
		require.ErrorIs(t, err, alloc.ErrElemType)

		m, err := alloc.MallocManaged[int32](f.Ctx, f.Dev, 64)
		require.NoError(t, err)
		err = m.Prefetch(f.Ctx, s, alloc.Location{}).Wait(f.Ctx)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		require.ErrorIs(t, m.Advise(f.Ctx, alloc.SetPreferredLocation, alloc.Location{}), device.ErrInvalidArgument)
		require.ErrorIs(t, m.Advise(f.Ctx, alloc.Advice(42), alloc.Host()), device.ErrInvalidArgument)
		err = m.Attach(f.Ctx, s, alloc.Attachment(3)).Wait(f.Ctx)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		require.NoError(t, m.Close(f.Ctx))
		require.ErrorIs(t, m.Close(f.Ctx), device.ErrClosed)
		err = m.Prefetch(f.Ctx, s, alloc.Host()).Wait(f.Ctx)
		require.ErrorIs(t, err, device.ErrClosed)
		_, err = m.Attributes(f.Ctx)
		require.ErrorIs(t, err, device.ErrClosed)
		requireStreamUsable(t, f, s)
	})
}
