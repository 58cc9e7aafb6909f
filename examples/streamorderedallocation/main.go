// Command streamorderedallocation is NVIDIA's streamOrderedAllocation sample done the gpuactor
// way: a vector addition whose three device buffers are allocated and freed in stream order
// (cudaMallocAsync / cudaFreeAsync from the device's memory pool), first once, then once per
// iteration with the pool told to keep its memory across synchronizations — against the same
// loop allocating with cudaMalloc and cudaFree. It checks every result and prints the time per
// iteration of both loops and PASS or FAIL.
//
//	go run ./examples/streamorderedallocation -n 1048576 -iterations 20
//	go run ./examples/streamorderedallocation -backend sim
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/streams"
)

const source = `
extern "C" __global__ void vectorAdd(const float* A, const float* B, float* C, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) C[i] = A[i] + B[i];
}
`

var simKernels = map[string]cuda.SimKernel{
	"vectorAdd": func(c *cuda.KernelCall) error {
		n := int(c.Int32(3))
		a := cuda.SimSlice[float32](c, 0, n)
		b := cuda.SimSlice[float32](c, 1, n)
		out := cuda.SimSlice[float32](c, 2, n)
		for i := range min(uint64(n), c.Threads()) {
			out[i] = a[i] + b[i]
		}
		return nil
	},
}

const threads = 256

type config struct {
	n          int
	iterations int
	sample.Flags
}

func main() {
	var c config
	flag.IntVar(&c.n, "n", 1<<20, "elements per vector")
	flag.IntVar(&c.iterations, "iterations", 20, "iterations of each timed loop")
	c.Register()
	flag.Parse()
	sample.Finish(run(c))
}

// job is what one vector addition needs: the kernel, its stream, pinned inputs and output.
type job struct {
	k    *device.Kernel
	s    *streams.Stream
	a, b *alloc.Pinned[float32]
	out  *alloc.Pinned[float32]
	n    int
}

func run(c config) (err error) {
	if c.n <= 0 || c.iterations <= 0 {
		return fmt.Errorf("-n and -iterations must be positive")
	}
	ctx := context.Background()
	dev, err := device.Open(ctx, c.Ordinal, c.Options()...)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, dev.Close)
	sample.Describe(dev)
	if !dev.Properties().MemoryPoolsSupported {
		fmt.Println("the device does not support memory pools: waiving")
		return nil
	}
	mod, err := dev.Compile(ctx, device.Source{Name: "vectorAdd.cu", Code: source, Sim: simKernels})
	if err != nil {
		return err
	}
	k, err := mod.Kernel(ctx, "vectorAdd")
	if err != nil {
		return err
	}
	s, err := streams.New(ctx, dev)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return s.Close(ctx) })

	j := &job{k: k, s: s, n: c.n}
	if j.a, err = alloc.MallocPinned[float32](ctx, dev, c.n); err != nil {
		return err
	}
	if j.b, err = alloc.MallocPinned[float32](ctx, dev, c.n); err != nil {
		return err
	}
	if j.out, err = alloc.MallocPinned[float32](ctx, dev, c.n); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i, a, b := 0, j.a.Slice(), j.b.Slice(); i < c.n; i++ {
		a[i], b[i] = rng.Float32(), rng.Float32()
	}

	// basicStreamOrderedAllocation: one allocation, use and free, all in stream order.
	if err := j.poolIteration(ctx); err != nil {
		return err
	}
	if err := j.check(); err != nil {
		return err
	}
	fmt.Println("basic stream-ordered allocation: ok")

	// streamOrderedAllocationPostSync: keep the pool's memory across the synchronization that
	// ends each iteration, so every iteration after the first reuses it.
	pool, err := alloc.DefaultPool(ctx, dev)
	if err != nil {
		return err
	}
	if err := pool.SetReleaseThreshold(ctx, alloc.KeepAll); err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return pool.SetReleaseThreshold(ctx, 0) })
	poolTime, err := timeLoop(c.iterations, func() error { return j.poolIteration(ctx) })
	if err != nil {
		return err
	}
	if err := j.check(); err != nil {
		return err
	}
	mallocTime, err := timeLoop(c.iterations, func() error { return j.mallocIteration(ctx) })
	if err != nil {
		return err
	}
	if err := j.check(); err != nil {
		return err
	}
	attrs, err := pool.Attributes(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("%d iterations of %d floats: MallocAsync/FreeAsync %v per iteration, cudaMalloc/cudaFree %v (%.1fx)\n",
		c.iterations, c.n, poolTime, mallocTime, float64(mallocTime)/float64(poolTime))
	fmt.Printf("default pool: %d bytes reserved, %d at most\n", attrs.ReservedCurrent, attrs.ReservedHigh)
	if u := dev.Usage(); u.Async.Count != 0 || u.Device.Count != 0 {
		return fmt.Errorf("allocations left behind: %+v", u)
	}
	return nil
}

func timeLoop(n int, fn func() error) (time.Duration, error) {
	start := time.Now()
	for range n {
		if err := fn(); err != nil {
			return 0, err
		}
	}
	return time.Since(start) / time.Duration(n), nil
}

// poolIteration allocates the three vectors in stream order, adds, copies the sum back, frees
// in stream order, and synchronizes once at the end.
func (j *job) poolIteration(ctx context.Context) error {
	var bufs [3]*alloc.Buffer[float32]
	for i := range bufs {
		b, _, err := alloc.MallocAsync[float32](ctx, j.s, j.n)
		if err != nil {
			return err
		}
		bufs[i] = b
	}
	futs := j.compute(ctx, bufs)
	for _, b := range bufs {
		futs = append(futs, b.CloseOn(ctx, nil))
	}
	return j.settle(ctx, futs)
}

// mallocIteration is the same with cudaMalloc and cudaFree, which synchronize the device.
func (j *job) mallocIteration(ctx context.Context) error {
	var bufs [3]*alloc.Buffer[float32]
	for i := range bufs {
		b, err := alloc.Malloc[float32](ctx, j.s, j.n)
		if err != nil {
			return err
		}
		bufs[i] = b
	}
	futs := j.compute(ctx, bufs)
	for _, b := range bufs {
		if err := b.Close(ctx); err != nil {
			return err
		}
	}
	return j.settle(ctx, futs)
}

// settle synchronizes the stream once and reports the first error of the operations queued.
func (j *job) settle(ctx context.Context, futs []actor.Waiter) error {
	if err := j.s.Synchronize(ctx); err != nil {
		return err
	}
	return actor.WaitAll(ctx, futs...)
}

// compute queues the copies in, the addition and the copy out, and returns their futures.
func (j *job) compute(ctx context.Context, bufs [3]*alloc.Buffer[float32]) []actor.Waiter {
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(uint32((j.n + threads - 1) / threads)), Block: cuda.Dim(threads)}
	return []actor.Waiter{
		j.s.CopyHostToDevice(ctx, bufs[0], j.a.HostBuffer),
		j.s.CopyHostToDevice(ctx, bufs[1], j.b.HostBuffer),
		j.s.Launch(ctx, j.k, cfg, bufs[0], bufs[1], bufs[2], int32(j.n)),
		j.s.CopyDeviceToHost(ctx, j.out.HostBuffer, bufs[2]),
	}
}

func (j *job) check() error {
	a, b, out := j.a.Slice(), j.b.Slice(), j.out.Slice()
	for i := range out {
		if out[i] != a[i]+b[i] {
			return fmt.Errorf("element %d: %v + %v gave %v", i, a[i], b[i], out[i])
		}
	}
	clear(out)
	return nil
}
