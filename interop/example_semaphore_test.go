package interop_test

import (
	"context"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/streams"
)

// A graph ordered with Vulkan through a timeline semaphore Vulkan exported as vkFD: each
// launch waits for Vulkan's frame (value frame), clears buf and signals frame+1 back. Before
// each launch the Exec's semaphore values are moved on. (Not run: the simulator imports no
// semaphores.)
func ExampleExternalSemaphore_graph() {
	ctx := context.Background()
	var (
		dev  *device.Device // an open GPU
		vkFD int            // from vkGetSemaphoreFdKHR
		buf  *device.Buffer
	)
	sem, err := interop.ImportSemaphore(ctx, dev, vkFD, interop.TimelineSemaphore)
	if err != nil {
		panic(err)
	}
	defer sem.Close(ctx)

	g, err := graphs.New(ctx, dev)
	if err != nil {
		panic(err)
	}
	defer g.Close(ctx)
	wait, err := g.AddSemaphoreWait(ctx, nil, graphs.SemaphoreOp{Semaphore: sem, Value: 1})
	if err != nil {
		panic(err)
	}
	cleared, err := g.AddMemset(ctx, graphs.After(wait), buf, 0)
	if err != nil {
		panic(err)
	}
	signal, err := g.AddSemaphoreSignal(ctx, graphs.After(cleared), graphs.SemaphoreOp{Semaphore: sem, Value: 2})
	if err != nil {
		panic(err)
	}
	x, err := g.Instantiate(ctx)
	if err != nil {
		panic(err)
	}
	defer x.Close(ctx)

	s := streams.Default(dev)
	for frame := uint64(1); frame < 100; frame += 2 {
		if err := x.SetSemaphoreOps(ctx, wait, graphs.SemaphoreOp{Semaphore: sem, Value: frame}); err != nil {
			panic(err)
		}
		if err := x.SetSemaphoreOps(ctx, signal, graphs.SemaphoreOp{Semaphore: sem, Value: frame + 1}); err != nil {
			panic(err)
		}
		if err := x.Launch(ctx, s).Wait(ctx); err != nil {
			panic(err)
		}
	}
}
