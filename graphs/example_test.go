package graphs_test

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/streams"
)

const exampleSource = `extern "C" __global__ void axpb(float* x, float a, float b, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] = a * x[i] + b;
}`

var exampleSim = map[string]cuda.SimKernel{"axpb": func(c *cuda.KernelCall) error {
	n := int(c.Int32(3))
	x := cuda.SimSlice[float32](c, 0, n)
	for i := range x {
		x[i] = c.Float32(1)*x[i] + c.Float32(2)
	}
	return nil
}}

func exampleSetup(ctx context.Context) (*device.Device, *device.Kernel, *streams.Stream) {
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	mod, err := dev.Compile(ctx, device.Source{Name: "axpb.cu", Code: exampleSource, Sim: exampleSim})
	if err != nil {
		panic(err)
	}
	k, err := mod.Kernel(ctx, "axpb")
	if err != nil {
		panic(err)
	}
	s, err := streams.New(ctx, dev)
	if err != nil {
		panic(err)
	}
	return dev, k, s
}

// Build a graph node by node, instantiate it and launch it twice, changing a kernel node's
// arguments in between.
func ExampleGraph_Instantiate() {
	ctx := context.Background()
	dev, k, s := exampleSetup(ctx)
	defer dev.Close()
	x, _ := dev.MallocBytes(ctx, 4*4)
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(32)}

	g, _ := graphs.New(ctx, dev)
	zero, _ := g.AddMemset(ctx, nil, x, 0)
	step, _ := g.AddKernel(ctx, graphs.After(zero), k, cfg, x, float32(1), float32(2), int32(4))
	_, out, _ := graphs.AddDownload[float32](ctx, g, graphs.After(step), x)
	exec, err := g.Instantiate(ctx)
	if err != nil {
		panic(err)
	}
	exec.Launch(ctx, s).Await(ctx)
	fmt.Println(out.Host())
	exec.SetKernelArgs(ctx, step, x, float32(1), float32(5), int32(4))
	exec.Launch(ctx, s).Await(ctx)
	fmt.Println(out.Host())
	// Output:
	// [2 2 2 2]
	// [5 5 5 5]
}

// Capture what a function queues on a stream as a graph.
func ExampleCapture() {
	ctx := context.Background()
	dev, k, s := exampleSetup(ctx)
	defer dev.Close()
	x, _ := dev.MallocBytes(ctx, 4*4)
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(32)}

	g, err := graphs.Capture(ctx, s, func(ctx context.Context) error {
		s.Memset(ctx, x, 0)
		s.Launch(ctx, k, cfg, x, float32(1), float32(1), int32(4))
		s.Launch(ctx, k, cfg, x, float32(3), float32(0), int32(4))
		return nil
	})
	if err != nil {
		panic(err)
	}
	d, _ := g.Describe(ctx)
	fmt.Print(d)
	// Output:
	// 0 memset
	// 1 kernel <- 0
	// 2 kernel <- 1
}

// Record a pipeline once and replay it per request with that request's buffer and numbers:
// graph speed without graph code.
func ExampleRecord() {
	ctx := context.Background()
	dev, k, s := exampleSetup(ctx)
	defer dev.Close()
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(32)}
	scratch, _ := dev.MallocBytes(ctx, 4*4)

	var scale graphs.Slot
	tpl, err := graphs.Record(ctx, s, func(ctx context.Context, r *graphs.Recorder) error {
		var err error
		scale, err = r.Launch(ctx, k, cfg, scratch, float32(1), float32(0), int32(4))
		return err
	})
	if err != nil {
		panic(err)
	}
	defer tpl.Close(ctx)
	for i, in := range [][]float32{{1, 2, 3, 4}, {10, 20, 30, 40}} {
		buf, _ := dev.MallocBytes(ctx, 4*4)
		out := make([]float32, 4)
		err := actor.WaitAll(ctx,
			streams.CopyToDevice(ctx, s, buf, in),
			tpl.Launch(ctx, s, graphs.Args(scale, buf, float32(i+2), float32(1), int32(4))),
			streams.CopyFromDevice(ctx, s, out, buf))
		if err != nil {
			panic(err)
		}
		fmt.Println(out)
	}
	// Output:
	// [3 5 7 9]
	// [31 61 91 121]
}

// Replay a graph many times in a row at the runtime's own launch rate: a time-stepping loop,
// here 1000 steps of x = x + 1, queued without one actor message per step.
func ExampleExec_LaunchN() {
	ctx := context.Background()
	dev, k, s := exampleSetup(ctx)
	defer dev.Close()
	x, _ := dev.MallocBytes(ctx, 4*4)
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(32)}

	g, _ := graphs.New(ctx, dev)
	if _, err := g.AddKernel(ctx, nil, k, cfg, x, float32(1), float32(1), int32(4)); err != nil {
		panic(err)
	}
	exec, err := g.Instantiate(ctx)
	if err != nil {
		panic(err)
	}
	s.Memset(ctx, x, 0)
	if _, err := exec.LaunchN(ctx, s, 1000).Await(ctx); err != nil {
		panic(err)
	}
	out := make([]float32, 4)
	if err := streams.CopyFromDevice(ctx, s, out, x).Wait(ctx); err != nil {
		panic(err)
	}
	fmt.Println(out)
	// Output:
	// [1000 1000 1000 1000]
}
