// Package testdev is what the tests of the module's device-using packages share: a bounded
// context, whether the cuda backend sees a device, running a test once per backend, and
// opening every device of a machine for the tests that take more than one.
package testdev

import (
	"context"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/internal/testgpu"
	"github.com/gpuactor/gpuactor/sim"
)

// Ctx is a context that ends with the test, or after two minutes: a hung GPU call fails the
// test instead of the whole run's timeout.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// GPU reports whether the cuda backend sees a device.
func GPU() bool {
	n, err := device.Count(context.Background(), device.WithBackend(device.BackendCUDA))
	return err == nil && n > 0
}

// SimDevices is how many devices the simulated machine of Backends' "sim" subtest has: more
// than two, so that a test over every device or every pair meets what two devices alone
// never show (ordinals past 1, a device that is neither end of a copy, pairs that do not
// include device 0), as a GPU host of four or eight does.
const SimDevices = 4

// Backends runs fn as subtest "sim", on a simulated machine of its own of SimDevices devices
// (every Open of the subtest shares it, as one process sees one set of GPUs), and as "cuda"
// on the GPU: skipped without one, failed without one when GPUACTOR_REQUIRE_GPU=1. Each has a
// kernel cache of its own.
func Backends(t *testing.T, fn func(t *testing.T, opts []device.Option)) {
	t.Run("sim", func(t *testing.T) {
		fn(t, []device.Option{device.WithSimulator(sim.New(sim.WithDevices(SimDevices))), device.WithKernelCache(t.TempDir())})
	})
	t.Run("cuda", func(t *testing.T) {
		testgpu.Need(t, GPU(), "the cuda backend sees no device")
		fn(t, []device.Option{device.WithBackend(device.BackendCUDA), device.WithKernelCache(t.TempDir())})
	})
}

// All returns every device of the machine opts describe, indexed by ordinal, for a test that
// takes more than one; it skips the test ("needs two devices") when the machine has fewer
// than two. have are devices the test has opened already on that machine: each stands in its
// ordinal's place. The others are opened in parallel (a GPU's context takes a while to make,
// and a host may have eight) and closed (and checked) with the test.
func All(t *testing.T, ctx context.Context, opts []device.Option, have ...*device.Device) []*device.Device {
	t.Helper()
	n, err := device.Count(ctx, opts...)
	require.NoError(t, err)
	if n < 2 {
		t.Skip("needs two devices")
	}
	devs := make([]*device.Device, n)
	for _, d := range have {
		require.Less(t, d.Ordinal(), n, "a device of another machine")
		devs[d.Ordinal()] = d
	}
	opened := make([]*device.Device, n)
	var g errgroup.Group
	for i := range devs {
		if devs[i] == nil {
			g.Go(func() (err error) {
				opened[i], err = device.Open(ctx, i, opts...)
				return err
			})
		}
	}
	err = g.Wait()
	for i, d := range opened {
		if d != nil {
			devs[i] = d
			t.Cleanup(func() { require.NoError(t, d.Close()) })
		}
	}
	require.NoError(t, err)
	return devs
}

// Pairs is every ordered pair of distinct ordinals below n, (0, 1), (0, 2), … (n-1, n-2):
// n·(n-1) of them, 56 on a host of eight GPUs. A test whose work for a pair is cheap runs
// every one; a test that covers both directions within a pair takes those with i < j.
func Pairs(n int) [][2]int {
	var ps [][2]int
	for i := range n {
		for j := range n {
			if i != j {
				ps = append(ps, [2]int{i, j})
			}
		}
	}
	return ps
}

// AddU32 is the CUDA source of add_u32(p, v, n), which adds v to each of the n words at p: the
// kernel the packages' tests launch. A test module adds its own kernels after it.
const AddU32 = `
extern "C" __global__ void add_u32(unsigned int* p, unsigned int v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += v;
}
`

// AddU32Sim is add_u32's twin for the simulator.
func AddU32Sim(c *cuda.KernelCall) error {
	n := int(c.Int32(2))
	p := cuda.SimSlice[uint32](c, 0, n)
	v := c.Uint32(1)
	for i := range p {
		p[i] += v
	}
	return nil
}

// Open opens device 0 of the machine opts describe, closed (and checked) with the test.
func Open(t testing.TB, ctx context.Context, opts []device.Option) *device.Device {
	t.Helper()
	dev, err := device.Open(ctx, 0, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, dev.Close()) })
	return dev
}

// OpenOn opens device 0 of be, a backend made inside the module (a simulator wrapped by
// internal/nullgpu, say), closed (and checked) with the test. The device has no properties
// of its own beyond its launch limits.
func OpenOn(t testing.TB, ctx context.Context, be backend.Backend) *device.Device {
	t.Helper()
	cd, err := core.Open(ctx, be, core.Config{}, 0)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, cd.Close()) })
	return (*device.Device)(cd)
}

// Write copies src into the start of dst and waits for it, through pinned memory on the
// device's own stream: a copy path of its own, to check the library's copies against.
func Write[T cuda.Numeric](t testing.TB, ctx context.Context, dst device.Mem, src []T) {
	t.Helper()
	require.NoError(t, pinnedCopy(ctx, dst, bytesOf(src), true))
}

// Read fills dst from the start of src and waits for it, as Write does.
func Read[T cuda.Numeric](t testing.TB, ctx context.Context, dst []T, src device.Mem) {
	t.Helper()
	require.NoError(t, pinnedCopy(ctx, src, bytesOf(dst), false))
}

func bytesOf[T cuda.Numeric](xs []T) []byte {
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(xs))), len(xs)*int(unsafe.Sizeof(zero)))
}

// pinnedCopy copies between host and the first len(host) bytes of m through a pinned buffer.
func pinnedCopy(ctx context.Context, m device.Mem, host []byte, toDevice bool) error {
	b, _, _ := core.Region(m)
	if b == nil || len(host) == 0 {
		return core.Invalid("testdev: nothing to copy")
	}
	d := b.Device()
	h, err := core.MallocHost(ctx, d, uint64(len(host)), 0)
	if err != nil {
		return err
	}
	defer h.Close(context.WithoutCancel(ctx))
	if toDevice {
		copy(h.Host(), host)
	}
	err = core.Queue(ctx, d.Stream(), func(rt backend.Device, _ *core.Tracker, s backend.Stream) error {
		p, _, err := d.Resolve("testdev copy", core.RangeOf(m, 0, uint64(len(host))))
		if err != nil {
			return err
		}
		hp, err := d.ResolveHost("testdev copy", h, uint64(len(host)))
		if err != nil {
			return err
		}
		if toDevice {
			return rt.CopyHtoD(p, hp, uint64(len(host)), s)
		}
		return rt.CopyDtoH(hp, p, uint64(len(host)), s)
	}).Wait(ctx)
	if err == nil && !toDevice {
		copy(host, h.Host())
	}
	return err
}

// OOBSim is oob's twin for the simulator: a store one past the end of its n floats.
var OOBSim = map[string]cuda.SimKernel{"oob": func(c *cuda.KernelCall) error {
	p := cuda.SimSlice[float32](c, 0, int(c.Int32(1))+1)
	p[len(p)-1] = 1
	return nil
}}

// OOBKernel compiles, on dev, oob(p, n), which writes p[n], one past the end of an n-float
// buffer: on the simulator a fault that fails the device for good, as it would a GPU (do not
// launch it on one: the fault would fail the GPU for the rest of the test process).
func OOBKernel(t testing.TB, ctx context.Context, dev *device.Device) *device.Kernel {
	t.Helper()
	mod, err := dev.Compile(ctx, device.Source{Name: "oob.cu", Code: `extern "C" __global__ void oob(float* p, int n) { p[n] = 1; }`,
		Sim: OOBSim})
	require.NoError(t, err)
	k, err := mod.Kernel(ctx, "oob")
	require.NoError(t, err)
	return k
}
