// Command asyncapi is NVIDIA's asyncAPI sample done the gpuactor way: it queues a copy to
// the GPU, a kernel and a copy back on one stream between two events, then keeps the CPU
// busy — counting — until the GPU has finished, to show that none of those calls waited for
// the GPU. It prints the GPU time, the CPU's count and PASS or FAIL.
//
//	go run ./examples/asyncapi -n 16777216
//	go run ./examples/asyncapi -backend sim
//
// Every stream operation returns a future as soon as its message is sent to the device's
// actor; the future completes when the GPU reaches the operation.
package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/streams"
)

// source is asyncAPI's kernel, with a bound on n so that any array length works.
const source = `
extern "C" __global__ void increment_kernel(int* g_data, int inc_value, int n) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) g_data[idx] = g_data[idx] + inc_value;
}
`

// simKernels is increment_kernel for the simulator: the same arithmetic, in Go.
var simKernels = map[string]cuda.SimKernel{
	"increment_kernel": func(c *cuda.KernelCall) error {
		n := int(c.Int32(2))
		inc := c.Int32(1)
		data := cuda.SimSlice[int32](c, 0, n)
		for i := range min(uint64(n), c.Threads()) {
			data[i] += inc
		}
		return nil
	},
}

// threads is the block size, as in the sample.
const threads = 512

type config struct {
	n   int // elements in the array
	inc int // what the kernel adds to each
	sample.Flags
}

func main() {
	var c config
	flag.IntVar(&c.n, "n", 16<<20, "ints in the array")
	flag.IntVar(&c.inc, "inc", 26, "what the kernel adds to every element")
	c.Register()
	flag.Parse()
	sample.Finish(run(c))
}

func run(c config) (err error) {
	if c.n <= 0 {
		return fmt.Errorf("-n must be positive")
	}
	ctx := context.Background()
	dev, err := device.Open(ctx, c.Ordinal, c.Options()...)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, dev.Close)
	sample.Describe(dev)

	mod, err := dev.Compile(ctx, device.Source{Name: "asyncapi.cu", Code: source, Sim: simKernels})
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return mod.Close(ctx) })
	kern, err := mod.Kernel(ctx, "increment_kernel")
	if err != nil {
		return err
	}

	nbytes := uint64(4 * c.n)
	host, err := dev.MallocPinnedBytes(ctx, nbytes) // pinned: the copies run while the CPU goes on
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return host.Close(ctx) })
	a := device.HostSlice[int32](host)
	clear(a)
	dA, err := dev.MallocBytes(ctx, nbytes)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return dA.Close(ctx) })
	if err := streams.Default(dev).Memset(ctx, dA, 255).Wait(ctx); err != nil { // as the sample does: the H2D copy must overwrite it
		return err
	}

	s, err := streams.New(ctx, dev)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return s.Close(ctx) })
	start, err := streams.NewEvent(ctx, dev)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return start.Close(ctx) })
	stop, err := streams.NewEvent(ctx, dev)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return stop.Close(ctx) })

	// Queue everything; none of these calls waits for the GPU.
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(uint32((c.n + threads - 1) / threads)), Block: cuda.Dim(threads)}
	queued := time.Now()
	ops := []actor.Waiter{
		s.Record(ctx, start),
		s.CopyHostToDevice(ctx, dA, host),
		s.Launch(ctx, kern, cfg, dA, int32(c.inc), int32(c.n)),
		s.CopyDeviceToHost(ctx, host, dA),
		s.Record(ctx, stop),
	}
	cpuTime := time.Since(queued)

	// Meanwhile the CPU is free: count until the stop event reports done. The Query is sent
	// after the Record, through the same actor, so it cannot see the event before its record.
	// (Without the count, ops[4].Ready() or a select on ops[4].Done() asks nobody.)
	counter := 0
	for {
		done, err := stop.Query(ctx)
		if err != nil {
			return err
		}
		if done {
			break
		}
		counter++
	}

	// The futures carry each operation's error; once the last one completed, all have.
	if err := actor.WaitAll(ctx, ops...); err != nil {
		return err
	}
	gpuTime, err := streams.Elapsed(ctx, start, stop)
	if err != nil {
		return err
	}
	fmt.Printf("time spent executing by the GPU: %.3f ms\n", float64(gpuTime)/float64(time.Millisecond))
	fmt.Printf("time spent by CPU in gpuactor calls: %.3f ms\n", float64(cpuTime)/float64(time.Millisecond))
	fmt.Printf("CPU executed %d iterations while waiting for GPU to finish\n", counter)

	for i, v := range a {
		if v != int32(c.inc) {
			return fmt.Errorf("element %d is %d, want %d", i, v, c.inc)
		}
	}
	fmt.Printf("verified %d elements\n", c.n)
	return nil
}
