package device_test

import (
	"context"
	"errors"
	"expvar"
	"fmt"
	"os"
	"time"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/isolate"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// Open a device and read its properties. WithBackend(BackendSim) makes the example run the
// same everywhere; drop it to use the GPU when there is one.
func ExampleOpen() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	p := dev.Properties()
	fmt.Println(p.Name, "compute", p.ComputeCapability, "warp", p.WarpSize)
	// Output: gpuactor simulator compute 9.0 warp 32
}

// Compile a kernel from CUDA C++ source, with its Go twin for the simulator, and run it on a
// stream.
func ExampleDevice_Compile() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	defer dev.Close()

	src := device.Source{
		Name: "scale.cu",
		Code: `extern "C" __global__ void scale(float* x, float a, int n) {
			int i = blockIdx.x * blockDim.x + threadIdx.x;
			if (i < n) x[i] *= a;
		}`,
		Sim: map[string]cuda.SimKernel{"scale": func(c *cuda.KernelCall) error {
			n := int(c.Int32(2))
			x := cuda.SimSlice[float32](c, 0, n)
			for i := range x {
				x[i] *= c.Float32(1)
			}
			return nil
		}},
	}
	mod, err := dev.Compile(ctx, src)
	if err != nil {
		panic(err)
	}
	k, err := mod.Kernel(ctx, "scale")
	if err != nil {
		panic(err)
	}
	s := streams.Default(dev)
	xs := []float32{1, 2, 3, 4}
	buf, _, err := alloc.MallocAsync[float32](ctx, s, len(xs))
	if err != nil {
		panic(err)
	}
	defer buf.Close(ctx)
	err = actor.WaitAll(ctx,
		streams.CopyToDevice(ctx, s, buf, xs),
		s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(32)}, buf, float32(10), len(xs)),
		streams.CopyFromDevice(ctx, s, xs, buf))
	if err != nil {
		panic(err)
	}
	fmt.Println(xs)
	// Output: [10 20 30 40]
}

// A Program is device code for every device: it compiles once per architecture and loads on
// whichever device asks for a kernel, again on a device opened anew after a failure. Here it
// runs on both devices of a simulated machine, and on device 1 opened a second time.
func ExampleProgram() {
	ctx := context.Background()
	machine := device.WithSimulator(sim.New(sim.WithDevices(2)))
	prog := device.NewProgram(device.Source{
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
	})
	defer prog.Close(ctx)

	scale := func(dev *device.Device, a float32) []float32 {
		k, err := prog.Kernel(ctx, dev, "scale") // loads the module on dev the first time
		if err != nil {
			panic(err)
		}
		s := streams.Default(dev)
		xs := []float32{1, 2, 3}
		buf, _, err := alloc.MallocAsync[float32](ctx, s, len(xs))
		if err != nil {
			panic(err)
		}
		defer buf.Close(ctx)
		err = actor.WaitAll(ctx,
			streams.CopyToDevice(ctx, s, buf, xs),
			s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(32)}, buf, a, len(xs)),
			streams.CopyFromDevice(ctx, s, xs, buf))
		if err != nil {
			panic(err)
		}
		return xs
	}
	for ord := range 2 {
		dev, err := device.Open(ctx, ord, machine)
		if err != nil {
			panic(err)
		}
		fmt.Println(dev.Ordinal(), scale(dev, float32(10*(ord+1))))
		_ = dev.Close()
	}
	again, err := device.Open(ctx, 1, machine) // a new device: the program loads on it too
	if err != nil {
		panic(err)
	}
	defer again.Close()
	fmt.Println(again.Ordinal(), scale(again, 30))
	// Output:
	// 0 [10 20 30]
	// 1 [20 40 60]
	// 1 [30 60 90]
}

// Every mistake is an error naming what was wrong, matchable with errors.Is, and the device
// stays usable.
func ExampleErrClosed() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	buf, err := dev.MallocBytes(ctx, 256)
	if err != nil {
		panic(err)
	}
	fmt.Println(buf.Close(ctx))
	err = buf.Close(ctx) // "gpuactor: closed: buffer 0x… of 256 bytes closed twice"
	fmt.Println(errors.Is(err, device.ErrClosed))
	// Output:
	// <nil>
	// true
}

// Publish a device's Stats with expvar, in one line: a service that imports expvar and serves
// net/http's default mux shows them on /debug/vars, refreshed at every request.
func ExampleDevice_Stats() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	defer dev.Close()

	expvar.Publish("gpuactor.device0", expvar.Func(func() any { return dev.Stats() }))

	st := dev.Stats()
	fmt.Println(st.Backend, "in flight:", st.InFlight, "healthy:", st.Failure == "")
	fmt.Println(expvar.Get("gpuactor.device0").String() != "")
	// Output:
	// sim in flight: 0 healthy: true
	// true
}

// Run a device in a worker process of its own, so that a fault, a crash or a kill ends the
// worker and not the program: open it again and a fresh worker has the GPU. The program's main
// calls isolate.Main first thing (here the test binary's TestMain does), which serves the
// device in the worker, with the simulator kernels it runs by name.
func ExampleIsolated() {
	ctx := context.Background()
	opts := []device.Option{device.WithBackend(device.BackendSim), device.Isolated()}
	dev, err := device.Open(ctx, 0, opts...)
	if err != nil {
		panic(err)
	}
	fmt.Println("isolated:", dev.Isolated(), "backend:", dev.Backend())

	// The worker dies (here: killed; a sticky fault or a hang ends it too).
	if p, err := os.FindProcess(dev.WorkerPID()); err == nil {
		_ = p.Kill()
	}
	for dev.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	fmt.Println("failed:", errors.Is(dev.Err(), device.ErrDeviceFailed), "worker died:", errors.Is(dev.Err(), isolate.ErrWorkerDied))
	_ = dev.Close()

	// A new worker on the same device, in the same program.
	dev, err = device.Open(ctx, 0, opts...)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	buf, _ := dev.MallocBytes(ctx, 16)
	err = streams.Default(dev).Memset(ctx, buf, 7).Wait(ctx)
	fmt.Println("works again:", err == nil)
	// Output:
	// isolated: true backend: sim
	// failed: true worker died: true
	// works again: true
}
