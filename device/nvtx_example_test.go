package device_test

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// Operations sent with a ctx from WithRange run inside a named NVTX range on the device's
// thread; StartRange brackets host-side work. Run the program under
// `nsys profile --trace=cuda,nvtx` to see both in the timeline; without a profiler they cost
// nothing.
func ExampleWithRange() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	end := device.StartRange("request 42")
	defer end()

	buf, err := dev.MallocBytes(ctx, 1<<20)
	if err != nil {
		panic(err)
	}
	step := device.WithRange(ctx, "clear")
	err = streams.Default(dev).Memset(step, buf, 0).Wait(ctx)
	fmt.Println(err)
	// Output: <nil>
}
