package group_test

import (
	"context"
	"fmt"
	"time"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
	"github.com/gpuactor/gpuactor/supervise"
)

// scaleSource is a kernel that multiplies a vector by a scalar, with its Go twin for the
// simulator.
var scaleSource = device.Source{
	Name: "scale.cu",
	Code: `extern "C" __global__ void scale(float* x, float a, int n) {
		int i = blockIdx.x * blockDim.x + threadIdx.x;
		if (i < n) x[i] *= a;
	}`,
	Sim: map[string]cuda.SimKernel{"scale": func(c *cuda.KernelCall) error {
		x := cuda.SimSlice[float32](c, 0, int(c.Int32(2)))
		for i := range x {
			x[i] *= c.Float32(1)
		}
		return nil
	}},
}

// openExampleDevices opens four simulated devices (drop WithSimulator to use every GPU), and
// makes the scale kernel's program: one for every device, loaded on each the first time a job
// there asks for the kernel, and again on a device that replaced a failed one.
func openExampleDevices(ctx context.Context) ([]*device.Device, *device.Program) {
	devs, err := device.OpenAll(ctx, device.WithSimulator(sim.New(sim.WithDevices(4))))
	if err != nil {
		panic(err)
	}
	return devs, device.NewProgram(scaleSource)
}

// Split a slice over every device, scale each shard on the device that took it, and gather
// the results in order.
func ExampleMap() {
	ctx := context.Background()
	devs, prog := openExampleDevices(ctx)
	defer prog.Close(ctx)
	g, err := group.New(ctx, devs)
	if err != nil {
		panic(err)
	}

	xs := make([]float32, 1000)
	for i := range xs {
		xs[i] = float32(i)
	}
	out, err := group.Map(ctx, g, xs, 0, func(ctx context.Context, d *device.Device, s *streams.Stream, shard []float32) ([]float32, error) {
		buf, _, err := alloc.MallocAsync[float32](ctx, s, len(shard))
		if err != nil {
			return nil, err
		}
		defer buf.Close(ctx)
		k, err := prog.Kernel(ctx, d, "scale") // the kernel on the device the shard landed on
		if err != nil {
			return nil, err
		}
		res := make([]float32, len(shard))
		cfg := cuda.LaunchConfig{Grid: cuda.Dim(uint32(len(shard)+255) / 256), Block: cuda.Dim(256)}
		streams.CopyToDevice(ctx, s, buf, shard)
		s.Launch(ctx, k, cfg, buf, float32(2), len(shard))
		return res, streams.CopyFromDevice(ctx, s, res, buf).Wait(ctx) // a stream's work fails in order
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(len(out), out[0], out[1], out[999])

	// The group first, then the devices it was given.
	if err := g.Close(ctx); err != nil {
		panic(err)
	}
	for _, d := range devs {
		d.Close()
	}
	// Output: 1000 0 2 1998
}

// Run a batch of jobs errgroup-style, then read how the group spread them.
func ExampleGroup_Go() {
	ctx := context.Background()
	devs, prog := openExampleDevices(ctx)
	defer prog.Close(ctx)
	g, err := group.New(ctx, devs, group.WithStreams(2))
	if err != nil {
		panic(err)
	}
	for range 100 {
		g.Go(ctx, func(ctx context.Context, d *device.Device, s *streams.Stream) error {
			buf, _, err := alloc.MallocAsync[float32](ctx, s, 256)
			if err != nil {
				return err
			}
			defer buf.Close(ctx)
			k, err := prog.Kernel(ctx, d, "scale")
			if err != nil {
				return err
			}
			return s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(256)}, buf, float32(3), 256).Wait(ctx)
		})
	}
	if err := g.Wait(); err != nil {
		panic(err)
	}
	var done uint64
	for _, st := range g.Stats().Devices {
		done += st.Done
	}
	fmt.Println("jobs done:", done)

	if err := g.Close(ctx); err != nil {
		panic(err)
	}
	for _, d := range devs {
		d.Close()
	}
	// Output: jobs done: 100
}

// Bring a failed device back: the group replaces it with the device open returns, runs the
// setup hook on it (here: loads the program's kernel), and places jobs on it again. The jobs
// ask the program for the kernel of the device they run on, which the restart changes. On GPUs, the devices would be opened with device.Isolated(), each in a
// worker process of its own, so that one's fault leaves the others running, and open would be
// device.Open(ctx, failed.Ordinal(), device.Isolated()); here sim.WithConfinedFaults gives the
// simulated devices that behaviour, and a new simulator stands for the new process.
func ExampleWithRestart() {
	ctx := context.Background()
	machine := sim.New(sim.WithDevices(2), sim.WithConfinedFaults())
	devs, err := device.OpenAll(ctx, device.WithSimulator(machine))
	if err != nil {
		panic(err)
	}
	open := func(ctx context.Context, failed *device.Device) (*device.Device, error) {
		return device.Open(ctx, failed.Ordinal(), device.WithSimulator(sim.New(sim.WithDevices(2))))
	}
	prog := device.NewProgram(scaleSource)
	defer prog.Close(ctx)
	setup := func(ctx context.Context, d *device.Device) error {
		_, err := prog.Kernel(ctx, d, "scale") // before the device takes a job
		return err
	}
	restarted := make(chan int, 1)
	g, err := group.New(ctx, devs, group.WithPolicy(group.RoundRobin), group.WithSetup(setup), group.WithRestart(open,
		supervise.WithRestarts(3, time.Minute), supervise.WithBackoff(time.Millisecond),
		supervise.OnRestart(func(generation int) { restarted <- generation })))
	if err != nil {
		panic(err)
	}

	_ = machine.Fail(1, cudaerr.LaunchFailure) // device 1 faults
	_ = devs[1].Health(ctx)                    // and learns of it, as a job on it would
	fmt.Println("device 1 is back, generation", <-restarted)

	for range 100 {
		g.Go(ctx, func(ctx context.Context, d *device.Device, s *streams.Stream) error {
			k, err := prog.Kernel(ctx, d, "scale")
			if err != nil {
				return err
			}
			buf, _, err := alloc.MallocAsync[float32](ctx, s, 32)
			if err != nil {
				return err
			}
			defer buf.Close(ctx)
			return s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(32)}, buf, float32(2), 32).Wait(ctx)
		})
	}
	if err := g.Wait(); err != nil {
		panic(err)
	}
	st := g.Stats().Devices[1]
	fmt.Printf("restarts %d, healthy %t, jobs done %d\n", st.Restarts, st.Healthy, st.Done)

	// The group closes the failed device and the one that replaced it; the others stay the
	// caller's.
	if err := g.Close(ctx); err != nil {
		panic(err)
	}
	devs[0].Close()
	// Output:
	// device 1 is back, generation 2
	// restarts 1, healthy true, jobs done 50
}

// Feed a pipeline stage: requests come on a channel, each is scaled on whichever device takes
// it, and the results go on in the order the requests came (Ordered; by default, in the order
// they complete). The output closes once the input has closed and every result is out.
func ExamplePipe() {
	ctx := context.Background()
	devs, prog := openExampleDevices(ctx)
	g, err := group.New(ctx, devs)
	if err != nil {
		panic(err)
	}

	requests := make(chan []float32)
	go func() {
		defer close(requests)
		for i := range 4 {
			requests <- []float32{float32(i), float32(10 * i)}
		}
	}()
	scale := func(ctx context.Context, d *device.Device, s *streams.Stream, xs []float32) ([]float32, error) {
		k, err := prog.Kernel(ctx, d, "scale")
		if err != nil {
			return nil, err
		}
		buf, _, err := alloc.MallocAsync[float32](ctx, s, len(xs))
		if err != nil {
			return nil, err
		}
		defer buf.Close(ctx)
		res := make([]float32, len(xs))
		streams.CopyToDevice(ctx, s, buf, xs)
		s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(32)}, buf, float32(3), len(xs))
		return res, streams.CopyFromDevice(ctx, s, res, buf).Wait(ctx)
	}
	for r := range group.Pipe(ctx, g, requests, scale, group.Ordered()) {
		if r.Err != nil {
			fmt.Println("request", r.Index, "failed:", r.Err)
			continue
		}
		fmt.Println(r.Item, "→", r.Value)
	}

	if err := g.Close(ctx); err != nil {
		panic(err)
	}
	for _, d := range devs {
		d.Close()
	}
	// Output:
	// [0 0] → [0 0]
	// [1 10] → [3 30]
	// [2 20] → [6 60]
	// [3 30] → [9 90]
}
