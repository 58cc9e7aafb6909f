package streams_test

import (
	"context"
	"fmt"
	"time"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// exampleDevice opens a simulated device with an add-one kernel, so that the examples run the
// same everywhere; drop WithBackend to use the GPU when there is one.
func exampleDevice(ctx context.Context) (*device.Device, *device.Kernel) {
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	mod, err := dev.Compile(ctx, device.Source{
		Name: "inc.cu",
		Code: `extern "C" __global__ void inc(int* x, int n) {
			int i = blockIdx.x * blockDim.x + threadIdx.x;
			if (i < n) x[i] += 1;
		}`,
		Sim: map[string]cuda.SimKernel{"inc": func(c *cuda.KernelCall) error {
			x := cuda.SimSlice[int32](c, 0, int(c.Int32(1)))
			for i := range x {
				x[i]++
			}
			return nil
		}},
	})
	if err != nil {
		panic(err)
	}
	k, err := mod.Kernel(ctx, "inc")
	if err != nil {
		panic(err)
	}
	return dev, k
}

// Operations queued on one stream run in order on the GPU; each returns a future that
// completes when the GPU has done it. Queue them all, then wait once.
func Example() {
	ctx := context.Background()
	dev, k := exampleDevice(ctx)
	defer dev.Close()

	s, err := streams.New(ctx, dev)
	if err != nil {
		panic(err)
	}
	defer s.Close(ctx)
	xs := []int32{1, 2, 3}
	buf, _, err := alloc.MallocAsync[int32](ctx, s, len(xs))
	if err != nil {
		panic(err)
	}
	defer buf.Close(ctx)
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(32)}
	err = actor.WaitAll(ctx,
		streams.CopyToDevice(ctx, s, buf, xs),
		s.Launch(ctx, k, cfg, buf, len(xs)),
		s.Launch(ctx, k, cfg, buf, len(xs)),
		streams.CopyFromDevice(ctx, s, xs, buf))
	if err != nil {
		panic(err)
	}
	fmt.Println(xs)
	// Output: [3 4 5]
}

// An event recorded on one stream orders another stream's later work after it, and times the
// GPU's work between two records.
func ExampleStream_Wait() {
	ctx := context.Background()
	dev, k := exampleDevice(ctx)
	defer dev.Close()
	producer, err := streams.New(ctx, dev)
	if err != nil {
		panic(err)
	}
	consumer, err := streams.New(ctx, dev)
	if err != nil {
		panic(err)
	}
	start, err := streams.NewEvent(ctx, dev)
	if err != nil {
		panic(err)
	}
	ready, err := streams.NewEvent(ctx, dev)
	if err != nil {
		panic(err)
	}
	buf, _, err := alloc.MallocAsync[int32](ctx, producer, 4)
	if err != nil {
		panic(err)
	}
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(32)}
	producer.Record(ctx, start)
	producer.Memset(ctx, buf, 0)
	producer.Launch(ctx, k, cfg, buf, 4)
	producer.Record(ctx, ready)

	consumer.Wait(ctx, ready) // the consumer's next work runs after the producer's launch
	out := make([]int32, 4)
	if err := streams.CopyFromDevice(ctx, consumer, out, buf).Wait(ctx); err != nil {
		panic(err)
	}
	d, err := streams.Elapsed(ctx, start, ready)
	fmt.Println(out, err == nil && d >= 0 && d < time.Minute)
	// Output: [1 1 1 1] true
}

// The device's own stream serves callers that need no stream of their own.
func ExampleDefault() {
	ctx := context.Background()
	dev, k := exampleDevice(ctx)
	defer dev.Close()
	s := streams.Default(dev)
	buf, _, err := alloc.MallocAsync[int32](ctx, s, 2)
	if err != nil {
		panic(err)
	}
	defer buf.Close(ctx)
	s.Memset(ctx, buf, 0)
	s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(32)}, buf, 2)
	out := make([]int32, 2)
	if err := streams.CopyFromDevice(ctx, s, out, buf).Wait(ctx); err != nil {
		panic(err)
	}
	fmt.Println(out)
	// Output: [1 1]
}
