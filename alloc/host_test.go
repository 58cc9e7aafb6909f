package alloc_test

import (
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testfix"
	"github.com/gpuactor/gpuactor/streams"
)

func TestPinned(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		p, err := alloc.MallocPinned[float32](f.Ctx, f.Dev, 1024, alloc.Mapped, alloc.Portable)
		require.NoError(t, err)
		require.Equal(t, uint64(4096), f.Dev.Stats().Memory.Pinned.Bytes)
		xs := p.Host()
		require.Len(t, xs, 1024)
		for i := range xs {
			xs[i] = float32(i) / 4
		}
		b, _, err := alloc.MallocAsync[float32](f.Ctx, s, 1024)
		require.NoError(t, err)
		testfix.Await(t, f.Ctx, s.CopyHostToDevice(f.Ctx, b, p.HostBuffer))
		out := make([]float32, 1024)
		testdev.Read(t, f.Ctx, out, b)
		require.Equal(t, xs, out)

		dp, err := p.DevicePtr(f.Ctx)
		require.NoError(t, err)
		require.NotZero(t, dp)
		hp, err := p.HostBuffer.DevicePtr(f.Ctx)
		require.NoError(t, err)
		require.Equal(t, dp, hp, "the typed and untyped views name one address")
		info, err := alloc.PointerAttributes(f.Ctx, f.Dev, uintptr(unsafe.Pointer(&xs[0])))
		require.NoError(t, err)
		require.Equal(t, alloc.HostMemory, info.Type)
		require.Equal(t, uintptr(unsafe.Pointer(&xs[0])), info.HostPointer)

		require.NoError(t, b.Close(f.Ctx))
		require.NoError(t, p.Close(f.Ctx))
		require.Nil(t, p.Host())
		_, err = p.DevicePtr(f.Ctx)
		require.ErrorIs(t, err, device.ErrClosed, "no address for freed memory")
		require.ErrorIs(t, p.Close(f.Ctx), device.ErrClosed)
		require.Zero(t, f.Dev.Stats().Memory.Pinned.Count)
	})
}

func TestPinnedPoolReuse(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		pool := alloc.PinnedPoolOf(f.Dev)
		a, err := alloc.GetPinned[uint64](f.Ctx, f.Dev, 1000) // 8000 bytes: the 64 KiB class
		require.NoError(t, err)
		require.Len(t, a.Host(), 1000)
		require.Equal(t, uint64(64<<10), a.Size())
		first := &a.HostBuffer.Host()[0]
		require.NoError(t, a.Close(f.Ctx))
		require.ErrorIs(t, pool.Put(f.Ctx, a.HostBuffer), device.ErrClosed, "put back twice")
		b, err := alloc.GetPinned[byte](f.Ctx, f.Dev, 60<<10)
		require.NoError(t, err)
		require.Same(t, first, &b.Host()[0], "the released buffer is reused")
		st := pool.Stats()
		require.Equal(t, uint64(1), st.Hits)
		require.Equal(t, uint64(1), st.Misses)
		require.NoError(t, b.Close(f.Ctx))
		require.Equal(t, 1, pool.Stats().CachedBuffers)
		require.NoError(t, pool.SetLimit(f.Ctx, 0))
		require.Zero(t, pool.Stats().CachedBytes)
		require.Zero(t, f.Dev.Stats().Memory.Pinned.Count)

		_, err = pool.Get(f.Ctx, 0)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		plain, err := f.Dev.MallocPinnedBytes(f.Ctx, 1000)
		require.NoError(t, err)
		require.ErrorIs(t, pool.Put(f.Ctx, plain), device.ErrInvalidArgument)
		require.NoError(t, plain.Close(f.Ctx))
	})
}

func TestRegister(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		data := make([]float64, 1<<17) // 1 MiB
		for i := range data {
			data[i] = float64(i) + 0.25
		}
		r, err := alloc.Register(f.Ctx, f.Dev, data, alloc.RegisterPortable)
		require.NoError(t, err)
		require.Equal(t, len(data), r.Len())
		require.Equal(t, uint64(1<<20), r.Size())
		require.Equal(t, uint64(1<<20), f.Dev.Stats().Memory.Registered.Bytes)
		require.Equal(t, uint64(1), f.Dev.Stats().Memory.Registered.Count)
		info, err := alloc.PointerAttributes(f.Ctx, f.Dev, uintptr(unsafe.Pointer(&data[0])))
		require.NoError(t, err)
		require.Equal(t, alloc.HostMemory, info.Type)

		b, _, err := alloc.MallocAsync[float64](f.Ctx, s, len(data))
		require.NoError(t, err)
		require.NoError(t, streams.CopyToDevice(f.Ctx, b.Stream(), b, r.Host()).Wait(f.Ctx))
		back := make([]float64, len(data))
		require.NoError(t, streams.CopyFromDevice(f.Ctx, b.Stream(), back, b).Wait(f.Ctx))
		require.Equal(t, data, back)
		require.NoError(t, b.Close(f.Ctx))

		_, err = alloc.Register(f.Ctx, f.Dev, data[:10])
		require.Error(t, err, "registering memory already registered")
		require.Equal(t, uint64(1), f.Dev.Stats().Memory.Registered.Count)

		require.NoError(t, r.Close(f.Ctx))
		require.Nil(t, r.Host())
		require.ErrorIs(t, r.Close(f.Ctx), device.ErrClosed)
		_, err = r.DevicePtr(f.Ctx)
		require.ErrorIs(t, err, device.ErrClosed)
		require.Zero(t, f.Dev.Stats().Memory.Registered.Count)
		info, err = alloc.PointerAttributes(f.Ctx, f.Dev, uintptr(unsafe.Pointer(&data[0])))
		require.NoError(t, err)
		require.Equal(t, alloc.Unregistered, info.Type)

		_, err = alloc.Register[float64](f.Ctx, f.Dev, nil)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		requireStreamUsable(t, f, s)
	})
}

// Registrations left behind are undone by the device's Close.
func TestRegisterReleasedByClose(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		d, err := device.Open(f.Ctx, 0, f.Opts...)
		require.NoError(t, err)
		data := make([]byte, 1<<20)
		r, err := alloc.Register(f.Ctx, d, data)
		require.NoError(t, err)
		require.NoError(t, d.Close())
		require.Nil(t, r.Host())
		// The memory can be registered again: the registration is gone.
		r2, err := alloc.Register(f.Ctx, f.Dev, data)
		require.NoError(t, err)
		require.NoError(t, r2.Close(f.Ctx))
	})
}

func TestPointerAttributes(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		b, _, err := alloc.MallocAsync[int32](f.Ctx, s, 100)
		require.NoError(t, err)
		info, err := alloc.PointerAttributes(f.Ctx, f.Dev, uintptr(ptrOf(t, b)))
		require.NoError(t, err)
		require.Equal(t, alloc.DeviceMemory, info.Type)
		require.Equal(t, f.Dev.Ordinal(), info.Device)
		require.Equal(t, uintptr(ptrOf(t, b)), info.DevicePointer)
		require.Zero(t, info.HostPointer)
		require.NoError(t, b.Close(f.Ctx))

		m, err := alloc.MallocManaged[int32](f.Ctx, f.Dev, 100)
		require.NoError(t, err)
		info, err = alloc.PointerAttributes(f.Ctx, f.Dev, uintptr(ptrOf(t, m)))
		require.NoError(t, err)
		require.Equal(t, alloc.ManagedMemory, info.Type)
		require.Equal(t, uintptr(ptrOf(t, m)), info.DevicePointer)
		require.Equal(t, uintptr(unsafe.Pointer(&m.Host()[0])), info.HostPointer)
		require.NoError(t, m.Close(f.Ctx))

		goMem := make([]byte, 64)
		info, err = alloc.PointerAttributes(f.Ctx, f.Dev, uintptr(unsafe.Pointer(&goMem[0])))
		require.NoError(t, err)
		require.Equal(t, alloc.Unregistered, info.Type)
		require.Equal(t, "unregistered", info.Type.String())
	})
}

// The pool serves many goroutines at once: every Get is a hit or a miss, the cached buffers
// are what the device counts as pinned, and Trim gives them all back.
func TestPinnedPoolConcurrent(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		pool := alloc.PinnedPoolOf(f.Dev)
		require.Same(t, pool, alloc.PinnedPoolOf(f.Dev))
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for w := range 8 {
			wg.Go(func() {
				for i := range 20 {
					h, err := pool.Get(f.Ctx, uint64(1+(w*20+i)%300_000))
					if err != nil {
						errs <- err
						return
					}
					b := h.Host()
					b[0], b[len(b)-1] = byte(w), byte(i)
					if err := pool.Put(f.Ctx, h); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		st := pool.Stats()
		require.Equal(t, uint64(160), st.Hits+st.Misses)
		require.Positive(t, st.Hits)
		require.Equal(t, uint64(st.CachedBuffers), f.Dev.Stats().Memory.Pinned.Count)
		require.NoError(t, pool.Trim(f.Ctx))
		require.Zero(t, f.Dev.Stats().Memory.Pinned.Count)
		_, err := pool.Get(f.Ctx, 0)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		require.ErrorIs(t, pool.Put(f.Ctx, nil), device.ErrInvalidArgument)
		h, err := pool.Get(f.Ctx, 100)
		require.NoError(t, err)
		require.NoError(t, h.Close(f.Ctx))
		require.ErrorIs(t, pool.Put(f.Ctx, h), device.ErrClosed, "a closed buffer is not taken back")
	})
}

// Pinned memory past what the machine has is refused with the runtime's out-of-memory error,
// from MallocPinnedBytes and from the pinned pool alike, and nothing is counted or kept.
func TestPinnedPastTheMachineIsRefused(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		const tib = 1 << 40
		_, err := f.Dev.MallocPinnedBytes(f.Ctx, tib)
		require.ErrorIs(t, err, cudaerr.MemoryAllocation)
		require.ErrorContains(t, err, "1099511627776")
		_, err = alloc.PinnedPoolOf(f.Dev).Get(f.Ctx, tib)
		require.ErrorIs(t, err, cudaerr.MemoryAllocation)
		require.Zero(t, f.Dev.Stats().Memory.Pinned.Count)
		require.Zero(t, alloc.PinnedPoolOf(f.Dev).Stats().CachedBytes)

		p, err := alloc.MallocPinned[byte](f.Ctx, f.Dev, 4096)
		require.NoError(t, err, "a sane size still works")
		require.NoError(t, p.Close(f.Ctx))
		requireStreamUsable(t, f, f.Stream(t))
	})
}
