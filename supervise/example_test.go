package supervise_test

import (
	"context"
	"fmt"
	"time"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/supervise"
)

// Supervise a device: when it fails, the supervisor closes it and opens a new one, at most
// three times a minute. Each start here opens a simulated machine of its own, as a worker
// process would see a fresh GPU; a GPU faulted inside this process could not come back.
func ExampleNew() {
	ctx := context.Background()
	var machine *sim.Simulator
	restarted := make(chan int, 1)
	sup, err := supervise.New(ctx, func(ctx context.Context) (*device.Device, error) {
		machine = sim.New()
		return device.Open(ctx, 0, device.WithSimulator(machine), device.WithWatchdog(time.Minute))
	}, supervise.WithRestarts(3, time.Minute), supervise.WithBackoff(time.Millisecond),
		supervise.OnRestart(func(gen int) { restarted <- gen }))
	if err != nil {
		panic(err)
	}
	defer sup.Close()

	dev, _ := sup.Current()
	_ = machine.Fail(0, cudaerr.IllegalAddress) // a kernel's fault, injected
	_, err = dev.MallocBytes(ctx, 16)
	fmt.Println("failed:", err != nil)
	fmt.Println("generation", <-restarted)
	dev, _ = sup.Current()
	fmt.Println("healthy:", dev.Health(ctx) == nil)
	// Output:
	// failed: true
	// generation 2
	// healthy: true
}
