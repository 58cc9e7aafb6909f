package device_test

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/device"
)

// ProfilerStart and ProfilerStop bound what a profiler started with
// --capture-range=cudaProfilerApi (nsys) collects.
func ExampleDevice_ProfilerStart() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	if err := dev.ProfilerStart(ctx); err != nil {
		panic(err)
	}
	// ... the work to profile ...
	fmt.Println(dev.ProfilerStop(ctx))
	// Output: <nil>
}
