package graphs_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
)

// Buffers of MallocAsync are graph kernel arguments as soon as MallocAsync returns: the
// address goes into the node when the device adds it, after the allocation has run. One whose
// allocation failed is refused with device.ErrAllocFailed.
func TestStreamOrderedBuffersAsKernelArgs(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		a, _, err := alloc.MallocAsync[uint32](f.Ctx, s, n)
		require.NoError(t, err)
		b, _, err := alloc.MallocAsync[uint32](f.Ctx, s, n)
		require.NoError(t, err)
		g := f.graph(t)
		k, err := g.AddKernel(f.Ctx, nil, f.add, cfg(n), a, uint32(2), int32(n))
		require.NoError(t, err)
		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		_, err = s.Memset(f.Ctx, a, 0).Await(f.Ctx)
		require.NoError(t, err)
		_, err = s.Memset(f.Ctx, b, 0).Await(f.Ctx)
		require.NoError(t, err)
		f.launch(t, x, s)
		require.NoError(t, x.SetKernelArgs(f.Ctx, k, b.Elems(0, n), uint32(5), int32(n)))
		f.launch(t, x, s)
		out := make([]uint32, n)
		require.NoError(t, a.CopyOut(f.Ctx, out))
		require.Equal(t, testdev.Filled(n, 2), out)
		require.NoError(t, b.CopyOut(f.Ctx, out))
		require.Equal(t, testdev.Filled(n, 5), out)

		// CUDA rounds a pool's maximum up to its own granularity: keep the request far above.
		p, err := alloc.NewPool(f.Ctx, f.Dev, alloc.MaxSize(64<<20))
		require.NoError(t, err)
		defer p.Close(f.Ctx)
		big, made, err := alloc.MallocAsync[uint32](f.Ctx, s, 1<<25, alloc.FromPool(p)) // 128 MiB > 64 MiB
		require.NoError(t, err)
		_, err = g.AddKernel(f.Ctx, nil, f.add, cfg(n), big, uint32(1), int32(n))
		require.ErrorIs(t, err, device.ErrAllocFailed)
		require.ErrorIs(t, err, cudaerr.MemoryAllocation)
		_, err = made.Await(f.Ctx)
		require.ErrorIs(t, err, cudaerr.MemoryAllocation)
		require.NoError(t, a.Close(f.Ctx))
		require.NoError(t, b.Close(f.Ctx))
	})
}
