package cudaerr_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/sim"
)

// A runtime failure is matched by its code with errors.Is, through any wrapping; CodeOf
// recovers the code, and IsSticky says whether the device is lost.
func Example() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim), device.WithSimulator(sim.New(sim.WithMemory(1<<30))))
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	_, err = dev.MallocBytes(ctx, 1<<40) // more than the device has
	fmt.Println(errors.Is(err, cudaerr.MemoryAllocation))
	code, _ := cudaerr.CodeOf(err)
	fmt.Println(code.Name(), cudaerr.IsSticky(err))
	fmt.Println(dev.Err()) // out of memory leaves the device usable
	// Output:
	// true
	// cudaErrorMemoryAllocation false
	// <nil>
}

// Every code is a Go error value of its own.
func ExampleCode() {
	err := fmt.Errorf("launching: %w", cudaerr.New("cudaLaunchKernel", cudaerr.IllegalAddress))
	fmt.Println(errors.Is(err, cudaerr.IllegalAddress), cudaerr.IllegalAddress.Sticky())
	// Output: true true
}
