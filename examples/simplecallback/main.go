// Command simplecallback is NVIDIA's simpleCallback sample done the gpuactor way: several
// workers, each a goroutine with a stream of its own (spread over every device the backend
// has), queue a copy to the GPU, a kernel and a copy back, then a host function that checks
// the worker's results when the stream reaches it. It also shows that a panic in a host
// function becomes its future's error and leaves the stream usable. It prints every worker's
// result and PASS or FAIL.
//
//	go run ./examples/simplecallback -workers 8
//	go run ./examples/simplecallback -backend sim   # the simulator has two devices
//
// A host function runs on a goroutine of its own once the GPU has finished the work queued
// before it; the work queued after it waits until it returns, so it must not wait for the
// stream itself.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/streams"
)

// source is simpleCallback's kernel.
const source = `
extern "C" __global__ void incKernel(int* data, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) data[i]++;
}
`

// simKernels is incKernel for the simulator: the same arithmetic, in Go.
var simKernels = map[string]cuda.SimKernel{
	"incKernel": func(c *cuda.KernelCall) error {
		n := int(c.Int32(1))
		data := cuda.SimSlice[int32](c, 0, n)
		for i := range min(uint64(n), c.Threads()) {
			data[i]++
		}
		return nil
	},
}

const threads = 512

type config struct {
	workers int // workloads, one goroutine and one stream each
	n       int // elements per workload
	sample.Flags
}

func main() {
	var c config
	flag.IntVar(&c.workers, "workers", 8, "workloads, each on a goroutine and a stream of its own")
	flag.IntVar(&c.n, "n", 1<<20, "ints per workload")
	c.RegisterBackend()
	flag.Parse()
	sample.Finish(run(c))
}

// result is what a worker's host function found.
type result struct {
	checked bool  // the host function ran
	err     error // the first wrong element, or nil
}

func run(c config) (err error) {
	if c.workers <= 0 || c.n <= 0 {
		return fmt.Errorf("-workers and -n must be positive")
	}
	ctx := context.Background()
	devs, err := device.OpenAll(ctx, c.Options()...)
	if err != nil {
		return err
	}
	for _, d := range devs {
		defer sample.Keep(&err, d.Close)
	}
	kernels := make([]*device.Kernel, len(devs))
	for i, d := range devs {
		sample.Describe(d)
		// A module belongs to one device: compile for each (the second compile hits the cache).
		mod, err := d.Compile(ctx, device.Source{Name: "simplecallback.cu", Code: source, Sim: simKernels})
		if err != nil {
			return err
		}
		if kernels[i], err = mod.Kernel(ctx, "incKernel"); err != nil {
			return err
		}
	}
	fmt.Printf("starting %d workers of %d ints over %d device(s)\n", c.workers, c.n, len(devs))

	results := make([]result, c.workers)
	g, gctx := errgroup.WithContext(ctx)
	for w := range c.workers {
		d := w % len(devs)
		g.Go(func() error { return worker(gctx, devs[d], kernels[d], w, c.n, &results[w]) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	// Awaiting a host function's future orders everything it wrote before what follows, so
	// the results are safe to read without a lock.
	failed := 0
	for w, r := range results {
		switch {
		case !r.checked:
			failed++
			fmt.Printf("worker %d (device %d): FAIL: its host function did not run\n", w, w%len(devs))
		case r.err != nil:
			failed++
			fmt.Printf("worker %d (device %d): FAIL: %v\n", w, w%len(devs), r.err)
		default:
			fmt.Printf("worker %d (device %d): PASS\n", w, w%len(devs))
		}
	}

	if err := panicking(ctx, devs[len(devs)-1]); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d workers failed", failed, c.workers)
	}
	return nil
}

// worker runs one workload on a stream of its own and lets a host function check it.
func worker(ctx context.Context, dev *device.Device, kern *device.Kernel, w, n int, res *result) (err error) {
	s, err := streams.New(ctx, dev)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return s.Close(ctx) })
	host, err := dev.MallocHost(ctx, uint64(4*n))
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return host.Close(ctx) })
	buf, err := dev.Malloc(ctx, uint64(4*n))
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return buf.Close(ctx) })

	data := device.HostSlice[int32](host)
	for i := range data {
		data[i] = int32(w + i)
	}
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(uint32((n + threads - 1) / threads)), Block: cuda.Dim(threads)}
	ops := []actor.Waiter{
		s.CopyHostToDevice(ctx, buf, host),
		s.Launch(ctx, kern, cfg, buf, int32(n)),
		s.CopyDeviceToHost(ctx, host, buf),
		// Runs once the copy back has finished: the data is the GPU's. It only reads and
		// records; waiting on s here would never end.
		s.HostFunc(ctx, func() {
			res.checked = true
			for i, v := range data {
				if want := int32(w + i + 1); v != want {
					res.err = fmt.Errorf("element %d is %d, want %d", i, v, want)
					return
				}
			}
		}),
	}
	if err := actor.WaitAll(ctx, ops...); err != nil {
		return fmt.Errorf("worker %d: %w", w, err)
	}
	return nil
}

// panicking queues a host function that panics, checks that the panic comes back as its
// future's error, and that the stream goes on with the work queued after it.
func panicking(ctx context.Context, dev *device.Device) (err error) {
	s, err := streams.New(ctx, dev)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return s.Close(ctx) })
	boom := s.HostFunc(ctx, func() { panic("deliberate panic in a host function") })
	ran := false
	after := s.HostFunc(ctx, func() { ran = true })

	_, perr := boom.Await(ctx)
	var pe *actor.PanicError
	if !errors.As(perr, &pe) {
		return fmt.Errorf("a panicking host function's future returned %v, want an *actor.PanicError", perr)
	}
	fmt.Printf("panicking host function: its future failed with %q\n", pe.Error())
	if _, err := after.Await(ctx); err != nil {
		return fmt.Errorf("the host function queued after the panic: %w", err)
	}
	if !ran {
		return errors.New("the host function queued after the panic did not run")
	}
	fmt.Println("the stream went on: the host function queued after it ran")
	return nil
}
