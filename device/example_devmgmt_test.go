package device_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
)

// Read any cudaDeviceAttr, here two that Properties does not carry.
func ExampleDevice_Attribute() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	for _, a := range []device.Attribute{device.AttrClusterLaunch, device.AttrMaxRegistersPerMultiprocessor} {
		v, err := dev.Attribute(ctx, a)
		if err != nil {
			panic(err)
		}
		fmt.Println(a, v)
	}
	_, err = dev.Attribute(ctx, 9999)
	fmt.Println(errors.Is(err, cudaerr.InvalidValue))
	// Output:
	// cudaDevAttrClusterLaunch 1
	// cudaDevAttrMaxRegistersPerMultiprocessor 65536
	// true
}

// Give each GPU thread a larger stack, then read the limit back.
func ExampleDevice_SetLimit() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	if err := dev.SetLimit(ctx, device.LimitStackSize, 8<<10); err != nil {
		panic(err)
	}
	v, err := dev.Limit(ctx, device.LimitStackSize)
	if err != nil {
		panic(err)
	}
	fmt.Println(device.LimitStackSize, v)
	// Output: cudaLimitStackSize 8192
}

// Open a device whose waits sleep instead of spinning: the flags are set before its context
// is made.
func ExampleWithFlags() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim), device.WithFlags(device.ScheduleBlockingSync))
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	f, err := dev.Flags(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(f)
	// Output: ScheduleBlockingSync|MapHost
}

// Find a device by the PCI address another tool (nvidia-smi, a scheduler) named it by.
func ExampleByPCIBusID() {
	ctx := context.Background()
	n, err := device.ByPCIBusID(ctx, "0000:01:00.0", device.WithBackend(device.BackendSim))
	fmt.Println(n, err)
	// Output: 0 <nil>
}

// A device's UUID, in the form CUDA_VISIBLE_DEVICES takes.
func ExampleDevice_UUID() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	u, err := dev.UUID(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(u.String()), u.String()[:4])
	// Output: 40 GPU-
}

// The last error recorded on the device's actor thread, whoever's call failed.
func ExampleDevice_LastError() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	_, _ = dev.Attribute(ctx, 9999) // a call that fails
	fmt.Println(errors.Is(dev.PeekError(ctx), cudaerr.InvalidValue))
	fmt.Println(errors.Is(dev.LastError(ctx), cudaerr.InvalidValue))
	fmt.Println(dev.LastError(ctx))
	// Output:
	// true
	// true
	// <nil>
}

// The loaded runtime's name and text of an error code.
func ExampleErrorText() {
	name, text, err := device.ErrorText(context.Background(), cudaerr.MemoryAllocation, device.WithBackend(device.BackendSim))
	fmt.Println(name, "-", text, err)
	// Output: cudaErrorMemoryAllocation - out of memory <nil>
}

// Choose the device that best meets a compute capability.
func ExampleChoose() {
	n, err := device.Choose(context.Background(), device.Properties{ComputeCapability: device.ComputeCapability{Major: 8}},
		device.WithBackend(device.BackendSim))
	fmt.Println(n, err)
	// Output: 0 <nil>
}

// Prefer shared memory over L1 for kernels that state no preference.
func ExampleDevice_SetCacheConfig() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	if err := dev.SetCacheConfig(ctx, cuda.CachePreferShared); err != nil {
		panic(err)
	}
	p, err := dev.CacheConfig(ctx)
	fmt.Println(p, err)
	// Output: prefer-shared <nil>
}

// Make a NIC's GPUDirect RDMA writes visible before a kernel reads them.
func ExampleDevice_FlushGPUDirectRDMAWrites() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	fmt.Println(dev.FlushGPUDirectRDMAWrites(ctx, device.FlushToOwner))
	// Output: <nil>
}
