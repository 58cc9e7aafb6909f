//go:build linux

package device_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// launchAttrSource holds kernels that need more than a plain launch: 200 KiB of dynamic shared
// memory, a grid-wide sync (cooperative launch) and distributed shared memory across a
// cluster's blocks (compute capability 9.0).
const launchAttrSource = `
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// Fills 200 KiB of dynamic shared memory, then each thread reads back a word another thread
// wrote: out[b*blockDim + t] = b*1000000 + (words-1-t).
extern "C" __global__ void big_shared(int* out, int words) {
    extern __shared__ int s[];
    for (int i = threadIdx.x; i < words; i += blockDim.x) s[i] = blockIdx.x * 1000000 + i;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = s[words - 1 - threadIdx.x];
}

// Phase 1 writes data[i] = 2i; after the grid-wide sync each thread reads its right neighbour,
// which another block may have written: out[i] = 2((i+1) mod n).
extern "C" __global__ void grid_sync(int* data, int* out, int n) {
    cg::grid_group g = cg::this_grid();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    data[i] = 2 * i;
    g.sync();
    out[i] = data[(i + 1) % n];
}

// Each block writes its shared memory, then reads its cluster partner's through distributed
// shared memory: out[b*blockDim + t] = (b^1)*1000 + t for 2x1x1 clusters.
extern "C" __global__ void cluster_swap(int* out) {
    __shared__ int s[256];
    cg::cluster_group c = cg::this_cluster();
    s[threadIdx.x] = blockIdx.x * 1000 + threadIdx.x;
    c.sync();
    int* partner = c.map_shared_rank(s, c.block_rank() ^ 1);
    out[blockIdx.x * blockDim.x + threadIdx.x] = partner[threadIdx.x];
    c.sync();
}
`

// launchAttrSim are the kernels' Go twins: a simulated kernel runs its whole grid in one call,
// so the grid-wide sync is the order of its loops.
var launchAttrSim = map[string]cuda.SimKernel{
	"big_shared": func(c *cuda.KernelCall) error {
		words, threads := int(c.Int32(1)), int(c.Block.X)
		out := cuda.SimSlice[int32](c, 0, int(c.Grid.X)*threads)
		for b := range int(c.Grid.X) {
			for t := range threads {
				out[b*threads+t] = int32(b*1000000 + words - 1 - t)
			}
		}
		return nil
	},
	"grid_sync": func(c *cuda.KernelCall) error {
		n := int(c.Int32(2))
		data, out := cuda.SimSlice[int32](c, 0, n), cuda.SimSlice[int32](c, 1, n)
		for i := range n {
			data[i] = int32(2 * i)
		}
		for i := range n {
			out[i] = data[(i+1)%n]
		}
		return nil
	},
	"cluster_swap": func(c *cuda.KernelCall) error {
		threads := int(c.Block.X)
		out := cuda.SimSlice[int32](c, 0, int(c.Grid.X)*threads)
		for b := range int(c.Grid.X) {
			for t := range threads {
				out[b*threads+t] = int32((b^1)*1000 + t)
			}
		}
		return nil
	},
}

// launchAttrModule compiles launchAttrSource on the GPU, with the CUDA headers' directory for
// cooperative_groups.h; the simulator loads the Go twins alone (the headers may be absent).
func launchAttrModule(t *testing.T, dev *device.Device) *device.Module {
	t.Helper()
	ctx := testdev.Ctx(t)
	if dev.Backend() == device.BackendSim {
		mod, err := dev.LoadModule(ctx, "launchattr_test.cu", nil, device.PTX, launchAttrSim)
		require.NoError(t, err)
		return mod
	}
	mod, err := dev.Compile(ctx, device.Source{Name: "launchattr_test.cu", Code: launchAttrSource, Sim: launchAttrSim}, device.ToolkitHeaders())
	require.NoError(t, err)
	return mod
}

// A launch asking for 200 KiB of dynamic shared memory runs with no call but the launch:
// gpuactor raises the kernel's limit itself.
func TestLaunchWith200KiBOfSharedMemory(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		const smem, threads, blocks = 200 << 10, 256, 4
		if dev.Properties().SharedMemPerBlockOptin < smem {
			t.Skipf("the device allows %d bytes of shared memory per block", dev.Properties().SharedMemPerBlockOptin)
		}
		k, err := launchAttrModule(t, dev).Kernel(ctx, "big_shared")
		require.NoError(t, err)
		out := mustMalloc(t, dev, blocks*threads*4)
		cfg := cuda.LaunchConfig{Grid: cuda.Dim(blocks), Block: cuda.Dim(threads), SharedMem: smem}
		s := streams.Default(dev)
		require.NoError(t, s.Launch(ctx, k, cfg, out, int32(smem/4)).Wait(ctx))
		got := make([]int32, blocks*threads)
		download(t, got, out)
		for b := range blocks {
			for tid := range threads {
				require.Equal(t, int32(b*1000000+smem/4-1-tid), got[b*threads+tid], "block %d thread %d", b, tid)
			}
		}
		attrs, err := k.Attributes(ctx)
		require.NoError(t, err)
		assert.Equal(t, smem, attrs.MaxDynamicSharedSizeBytes, "the launch raised the kernel's limit")
		// A smaller launch after it needs nothing more.
		require.NoError(t, s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(threads), SharedMem: 64 << 10}, out, int32(64<<10/4)).Wait(ctx))
	})
}

// A cooperative kernel's grid-wide sync orders its two phases across blocks; the grid is as
// large as can be co-resident, and one block more is refused saying so.
func TestCooperativeLaunchSyncsTheGrid(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		props := dev.Properties()
		if !props.CooperativeLaunch {
			t.Skip("the device has no cooperative launch")
		}
		k, err := launchAttrModule(t, dev).Kernel(ctx, "grid_sync")
		require.NoError(t, err)
		const threads = 256
		perSM, err := k.MaxActiveBlocksPerSM(ctx, threads, 0)
		require.NoError(t, err)
		require.Positive(t, perSM)
		blocks := perSM * props.MultiProcessors
		n := blocks * threads
		data, out := mustMalloc(t, dev, uint64(n)*4), mustMalloc(t, dev, uint64(n)*4)
		cfg := cuda.LaunchConfig{Grid: cuda.Dim(uint32(blocks)), Block: cuda.Dim(threads), Cooperative: true}
		s := streams.Default(dev)
		require.NoError(t, s.Launch(ctx, k, cfg, data, out, int32(n)).Wait(ctx))
		got := make([]int32, n)
		download(t, got, out)
		for i := range n {
			require.Equal(t, int32(2*((i+1)%n)), got[i], "thread %d", i)
		}

		cfg.Grid = cuda.Dim(uint32(blocks + 1))
		err = s.Launch(ctx, k, cfg, data, out, int32(n)).Wait(ctx)
		require.ErrorIs(t, err, device.ErrLaunchConfig)
		assert.Contains(t, err.Error(), "cooperative grid of")
		assert.Contains(t, err.Error(), "can be resident at once")
		testdev.RequireUsable(t, dev)
	})
}

// 2x1x1 clusters exchange their blocks' shared memory through distributed shared memory.
func TestClusterLaunchSharesMemoryAcrossBlocks(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		if dev.Properties().ComputeCapability.Major < 9 {
			t.Skip("thread block clusters need compute capability 9.0")
		}
		k, err := launchAttrModule(t, dev).Kernel(ctx, "cluster_swap")
		require.NoError(t, err)
		const threads, blocks = 256, 8
		cfg := cuda.LaunchConfig{Grid: cuda.Dim(blocks), Block: cuda.Dim(threads), Cluster: cuda.Dim(2)}
		most, err := k.MaxActiveClusters(ctx, cfg)
		require.NoError(t, err)
		assert.Positive(t, most)
		size, err := k.MaxPotentialClusterSize(ctx, cfg)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, size, 2)

		out := mustMalloc(t, dev, blocks*threads*4)
		s := streams.Default(dev)
		require.NoError(t, s.Launch(ctx, k, cfg, out).Wait(ctx))
		got := make([]int32, blocks*threads)
		download(t, got, out)
		for b := range blocks {
			for tid := range threads {
				require.Equal(t, int32((b^1)*1000+tid), got[b*threads+tid], "block %d thread %d", b, tid)
			}
		}
	})
}

// Launch attributes the device or kernel cannot take are refused naming the value and the
// limit, and the device stays usable.
func TestLaunchAttributesBadInput(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		props := dev.Properties()
		k, err := saxpyModule(t, dev).Kernel(ctx, "empty")
		require.NoError(t, err)
		least, greatest, err := streams.PriorityRange(ctx, dev)
		require.NoError(t, err)
		s := streams.Default(dev)
		one := cuda.Dim(1)
		for _, c := range []struct {
			name string
			cfg  cuda.LaunchConfig
			says string
		}{
			{"shared memory above the opt-in limit", cuda.LaunchConfig{Grid: one, Block: one, SharedMem: uint32(props.SharedMemPerBlockOptin + 1)}, "opt-in limit"},
			{"cluster does not divide the grid", cuda.LaunchConfig{Grid: cuda.Dim(3), Block: one, Cluster: cuda.Dim(2)}, "does not divide grid"},
			{"cluster above the portable size", cuda.LaunchConfig{Grid: cuda.Dim(16), Block: one, Cluster: cuda.Dim(16)}, "more than the 8 allowed"},
			{"zero cluster extent", cuda.LaunchConfig{Grid: cuda.Dim(4), Block: one, Cluster: cuda.Dim3{X: 2}}, "zero extent"},
			{"priority out of range", cuda.LaunchConfig{Grid: one, Block: one, Priority: greatest - 1}, "outside the device's range"},
			{"memory sync domain", cuda.LaunchConfig{Grid: one, Block: one, MemSyncDomain: 7}, "domain 7"},
			{"cluster scheduling policy", cuda.LaunchConfig{Grid: one, Block: one, Cluster: one, ClusterScheduling: 9}, "policy 9"},
		} {
			err := s.Launch(ctx, k, c.cfg).Wait(ctx)
			require.ErrorIs(t, err, device.ErrLaunchConfig, c.name)
			assert.Contains(t, err.Error(), c.says, c.name)
			assert.Contains(t, err.Error(), "empty", c.name)
		}
		if least != greatest {
			require.NoError(t, s.Launch(ctx, k, cuda.LaunchConfig{Grid: one, Block: one, Priority: greatest}).Wait(ctx))
		}
		require.NoError(t, s.Launch(ctx, k, cuda.LaunchConfig{Grid: one, Block: one, MemSyncDomain: cuda.MemSyncDomainRemote, ProgrammaticSerialization: true}).Wait(ctx))
		if props.ComputeCapability.Major >= 9 {
			require.NoError(t, k.SetNonPortableClusterSizeAllowed(ctx, true))
			attrs, err := k.Attributes(ctx)
			require.NoError(t, err)
			assert.True(t, attrs.NonPortableClusterSizeAllowed)
			size, err := k.MaxPotentialClusterSize(ctx, cuda.LaunchConfig{Grid: cuda.Dim(16), Block: cuda.Dim(32)})
			require.NoError(t, err)
			if size >= 16 {
				require.NoError(t, s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(16), Block: cuda.Dim(32), Cluster: cuda.Dim(16)}).Wait(ctx))
			}
		}
		testdev.RequireUsable(t, dev)
	})
}

// Kernel attributes read back what the setters set; values CUDA refuses are refused before
// the device is asked.
func TestKernelAttributes(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		props := dev.Properties()
		k, err := saxpyModule(t, dev).Kernel(ctx, "saxpy")
		require.NoError(t, err)
		a, err := k.Attributes(ctx)
		require.NoError(t, err)
		assert.Equal(t, props.MaxThreadsPerBlock, a.MaxThreadsPerBlock)
		assert.LessOrEqual(t, a.BinaryVersion, props.ComputeCapability.Arch())
		assert.Equal(t, props.SharedMemPerBlock, a.MaxDynamicSharedSizeBytes)

		require.NoError(t, k.SetMaxDynamicSharedMemory(ctx, 100<<10))
		require.NoError(t, k.SetPreferredSharedCarveout(ctx, 50))
		require.NoError(t, k.SetCacheConfig(ctx, cuda.CachePreferShared))
		a, err = k.Attributes(ctx)
		require.NoError(t, err)
		assert.Equal(t, 100<<10, a.MaxDynamicSharedSizeBytes)
		assert.Equal(t, 50, a.PreferredSharedCarveout)

		name, err := k.RuntimeName(ctx)
		if err == nil {
			assert.Equal(t, "saxpy", name)
		}

		require.ErrorIs(t, k.SetMaxDynamicSharedMemory(ctx, props.SharedMemPerBlockOptin+1), device.ErrInvalidArgument)
		err = k.SetPreferredSharedCarveout(ctx, 101)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "carveout 101%")
		require.ErrorIs(t, k.SetCacheConfig(ctx, 4), device.ErrInvalidArgument)
		require.ErrorIs(t, k.SetClusterSchedulingPolicy(ctx, 3), device.ErrInvalidArgument)
		require.ErrorIs(t, k.SetRequiredClusterShape(ctx, cuda.Dim3{X: 2}), device.ErrInvalidArgument)
		testdev.RequireUsable(t, dev)
	})
}

// MaxPotentialBlockSize follows the runtime's template: for an empty kernel the whole
// multiprocessor's threads fit, and the grid fills every multiprocessor; a shared memory
// need that grows with the block shrinks the block the helper picks.
func TestMaxPotentialBlockSize(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		props := dev.Properties()
		k, err := saxpyModule(t, dev).Kernel(ctx, "empty")
		require.NoError(t, err)
		grid, block, err := k.MaxPotentialBlockSize(ctx, nil, 0)
		require.NoError(t, err)
		perSM, err := k.MaxActiveBlocksPerSM(ctx, block, 0)
		require.NoError(t, err)
		assert.Equal(t, props.MaxThreadsPerSM, block*perSM, "full occupancy")
		assert.Equal(t, perSM*props.MultiProcessors, grid)
		assert.Equal(t, props.MaxThreadsPerBlock, block, "the largest block that reaches it, tried first")

		_, block, err = k.MaxPotentialBlockSize(ctx, nil, 100)
		require.NoError(t, err)
		assert.LessOrEqual(t, block, 100)

		perThread := func(b int) int { return b * 200 } // 200 bytes of shared memory a thread
		_, block, err = k.MaxPotentialBlockSize(ctx, perThread, 0)
		require.NoError(t, err)
		assert.Positive(t, block)
		assert.LessOrEqual(t, perThread(block), props.SharedMemPerBlockOptin)

		_, _, err = k.MaxPotentialBlockSize(ctx, func(int) int { return -1 }, 0)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, _, err = k.MaxPotentialBlockSize(ctx, nil, -1)
		require.ErrorIs(t, err, device.ErrInvalidArgument)

		avail, err := k.AvailableDynamicSharedMemory(ctx, 2, 128)
		require.NoError(t, err)
		assert.Positive(t, avail)
		assert.LessOrEqual(t, avail, props.SharedMemPerSM/2)
		_, err = k.AvailableDynamicSharedMemory(ctx, 0, 128)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
	})
}

// A launch's programmatic event lets another stream wait for the kernel's blocks: here they
// never trigger early, so the event completes with the kernel and the waiting stream sees its
// results. An event that keeps timing, or none, is refused.
func TestProgrammaticEvent(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		mod := saxpyModule(t, dev)
		fill, err := mod.Kernel(ctx, "fill_u32")
		require.NoError(t, err)
		saxpy, err := mod.Kernel(ctx, "saxpy")
		require.NoError(t, err)
		a, b := streams.Default(dev), mustStream(t, dev)
		ev, err := streams.NewEvent(ctx, dev, streams.DisableTiming)
		require.NoError(t, err)

		const n = 4096
		out := mustMalloc(t, dev, 4*n)
		cfg := cuda.LaunchConfig{Grid: cuda.Dim(n / 256), Block: cuda.Dim(256)}
		require.NoError(t, a.LaunchTriggering(ctx, fill, cfg, ev, out, uint32(7), int64(n)).Wait(ctx))
		copied := mustMalloc(t, dev, 4*n)
		b.Wait(ctx, ev)
		require.NoError(t, b.Copy(ctx, copied, out).Wait(ctx))
		got := make([]uint32, n)
		download(t, got, copied)
		for i := range got {
			require.Equal(t, uint32(7+i), got[i], "element %d", i)
		}
		done, err := ev.Query(ctx)
		require.NoError(t, err)
		assert.True(t, done)

		timed, err := streams.NewEvent(ctx, dev)
		require.NoError(t, err)
		err = a.LaunchTriggering(ctx, fill, cfg, timed, out, uint32(7), int64(n)).Wait(ctx)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "DisableTiming")
		err = a.LaunchTriggering(ctx, fill, cfg, nil, out, uint32(7), int64(n)).Wait(ctx)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		err = a.LaunchTriggering(ctx, saxpy, cfg, ev, out).Wait(ctx)
		require.ErrorIs(t, err, device.ErrKernelArgs, "the arguments are checked as for Launch")
		testdev.RequireUsable(t, dev)
	})
}

func mustStream(t *testing.T, dev *device.Device) *streams.Stream {
	t.Helper()
	ctx := testdev.Ctx(t)
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close(ctx)) })
	return s
}
