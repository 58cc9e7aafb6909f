package device_test

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// exampleKernel loads a kernel that does nothing, for the examples below; on the simulator it
// is its Go twin alone.
func exampleKernel(ctx context.Context, dev *device.Device) *device.Kernel {
	mod, err := dev.LoadModule(ctx, "empty", nil, device.PTX, map[string]cuda.SimKernel{
		"empty": func(*cuda.KernelCall) error { return nil },
	})
	if err != nil {
		panic(err)
	}
	k, err := mod.Kernel(ctx, "empty")
	if err != nil {
		panic(err)
	}
	return k
}

// Pick a block size with the occupancy calculator, as cudaOccupancyMaxPotentialBlockSize
// does, and check what one multiprocessor then holds.
func ExampleKernel_MaxPotentialBlockSize() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	k := exampleKernel(ctx, dev)

	minGrid, block, err := k.MaxPotentialBlockSize(ctx, nil, 0)
	if err != nil {
		panic(err)
	}
	perSM, err := k.MaxActiveBlocksPerSM(ctx, block, 0)
	if err != nil {
		panic(err)
	}
	fmt.Println("block", block, "min grid", minGrid, "blocks per SM", perSM)
	// Output: block 1024 min grid 16 blocks per SM 2
}

// Launch with attributes beyond the shape: a cooperative grid, thread block clusters, a
// launch above 48 KiB of shared memory (gpuactor raises the kernel's limit itself).
func ExampleKernel_Attributes() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	k := exampleKernel(ctx, dev)
	s := streams.Default(dev)

	coop := cuda.LaunchConfig{Grid: cuda.Dim(16), Block: cuda.Dim(256), Cooperative: true}
	clustered := cuda.LaunchConfig{Grid: cuda.Dim(8), Block: cuda.Dim(128), Cluster: cuda.Dim(2)}
	big := cuda.LaunchConfig{Grid: cuda.Dim(4), Block: cuda.Dim(128), SharedMem: 200 << 10}
	for _, cfg := range []cuda.LaunchConfig{coop, clustered, big} {
		if err := s.Launch(ctx, k, cfg).Wait(ctx); err != nil {
			panic(err)
		}
	}
	clusters, err := k.MaxActiveClusters(ctx, clustered)
	if err != nil {
		panic(err)
	}
	attrs, err := k.Attributes(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("resident 2-block clusters:", clusters)
	fmt.Println("dynamic shared memory limit:", attrs.MaxDynamicSharedSizeBytes)

	coop.Grid = cuda.Dim(1000)
	fmt.Println(s.Launch(ctx, k, coop).Wait(ctx) != nil)
	// Output:
	// resident 2-block clusters: 64
	// dynamic shared memory limit: 204800
	// true
}
