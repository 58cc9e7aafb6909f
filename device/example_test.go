package device_test

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/device"
)

// Open a device and read its properties. WithBackend(BackendSim) makes the example run the
// same everywhere; drop it to use the GPU when there is one.
func ExampleOpen() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	p := dev.Properties()
	fmt.Println(p.Name, "compute", p.ComputeCapability, "warp", p.WarpSize)
	// Output: gpuactor simulator compute 9.0 warp 32
}

// Compile a kernel from CUDA C++ source, with its Go twin for the simulator, and run it.
func ExampleDevice_Compile() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	defer dev.Close()

	src := device.Source{
		Name: "scale.cu",
		Code: `extern "C" __global__ void scale(float* x, float a, int n) {
			int i = blockIdx.x * blockDim.x + threadIdx.x;
			if (i < n) x[i] *= a;
		}`,
		Sim: map[string]device.SimKernel{"scale": func(c *device.KernelCall) error {
			n := int(c.Int32(2))
			x := device.SimSlice[float32](c, 0, n)
			for i := range x {
				x[i] *= c.Float32(1)
			}
			return nil
		}},
	}
	mod, err := dev.Compile(ctx, src)
	if err != nil {
		panic(err)
	}
	k, err := mod.Kernel(ctx, "scale")
	if err != nil {
		panic(err)
	}
	xs := []float32{1, 2, 3, 4}
	buf, err := dev.Malloc(ctx, 4*uint64(len(xs)))
	if err != nil {
		panic(err)
	}
	defer buf.Free(ctx)
	if err := device.CopyToDevice(ctx, buf, xs); err != nil {
		panic(err)
	}
	cfg := device.Config{Grid: device.Dim(1), Block: device.Dim(32)}
	if err := dev.LaunchSync(ctx, k, cfg, buf, float32(10), len(xs)); err != nil {
		panic(err)
	}
	if err := device.CopyFromDevice(ctx, xs, buf); err != nil {
		panic(err)
	}
	fmt.Println(xs)
	// Output: [10 20 30 40]
}
