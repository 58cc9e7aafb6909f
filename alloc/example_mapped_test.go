package alloc_test

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// Zero copy: a kernel doubles pinned host memory in place through its device address, and
// the host reads the result once the launch's future is done, with no copy either way.
func ExamplePinned_DevicePtr() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	mod, err := dev.Compile(ctx, device.Source{
		Name: "double.cu",
		Code: `extern "C" __global__ void double_f32(float* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] *= 2;
}`,
		Sim: map[string]cuda.SimKernel{"double_f32": func(c *cuda.KernelCall) error {
			for i, p := 0, cuda.SimSlice[float32](c, 0, int(c.Int32(1))); i < len(p); i++ {
				p[i] *= 2
			}
			return nil
		}},
	})
	if err != nil {
		panic(err)
	}
	k, err := mod.Kernel(ctx, "double_f32")
	if err != nil {
		panic(err)
	}

	p, err := alloc.MallocPinned[float32](ctx, dev, 4, alloc.Mapped)
	if err != nil {
		panic(err)
	}
	defer p.Close(ctx)
	copy(p.Host(), []float32{1, 2, 3, 4})
	dp, err := p.DevicePtr(ctx)
	if err != nil {
		panic(err)
	}
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(32)}
	if err := streams.Default(dev).Launch(ctx, k, cfg, dp, int32(4)).Wait(ctx); err != nil {
		panic(err)
	}
	fmt.Println(p.Host())
	// Output: [2 4 6 8]
}

// Advice and a prefetch on the second half of managed memory, read back for each half.
func ExampleManaged_RangeAttributes() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	const half = 1 << 20 // 4 MiB of float32 in each half: whole pages
	m, err := alloc.MallocManaged[float32](ctx, dev, 2*half)
	if err != nil {
		panic(err)
	}
	defer m.Close(ctx)
	if err := m.AdviseRange(ctx, half, half, alloc.SetPreferredLocation, alloc.Host()); err != nil {
		panic(err)
	}
	if err := m.AdviseRange(ctx, half, half, alloc.SetAccessedBy, alloc.OnDevice(dev)); err != nil {
		panic(err)
	}
	if err := m.PrefetchRange(ctx, streams.Default(dev), half, half, alloc.OnDevice(dev)).Wait(ctx); err != nil {
		panic(err)
	}
	for _, first := range []int{0, half} {
		a, err := m.RangeAttributes(ctx, first, half)
		if err != nil {
			panic(err)
		}
		fmt.Printf("from %d: preferred %v, last prefetch %v, accessed by %v\n", first, a.PreferredLocation, a.LastPrefetchLocation, a.AccessedBy)
	}
	// Output:
	// from 0: preferred none, last prefetch none, accessed by []
	// from 1048576: preferred host, last prefetch device 0, accessed by [device 0]
}
