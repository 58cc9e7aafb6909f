// Command graphmemorynodes is NVIDIA's graphMemoryNodes sample done the gpuactor way: graphs
// that allocate the memory they work in with allocation nodes and give it back with free
// nodes, so that temporary buffers cost nothing between launches. It runs
//
//  1. one graph that allocates two scratch arrays, computes out = a + b in them, and frees
//     both, launched many times;
//  2. the same work split over two graphs: the first allocates and fills, the second consumes
//     and frees what the first allocated (a graph allocation outlives its graph's launch
//     until some free node releases it);
//  3. a graph that never frees its allocation, which cannot be relaunched until it is, unless
//     instantiated with AutoFreeOnLaunch;
//
// and checks every result. It prints the device's free memory before and after, and PASS or
// FAIL.
//
//	go run ./examples/graphmemorynodes -n 16777216 -launches 100
//	go run ./examples/graphmemorynodes -backend sim -n 100000
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/streams"
)

const source = `
extern "C" __global__ void fill(int* p, int base, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = base + i;
}
extern "C" __global__ void add(int* out, const int* a, const int* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}
`

var simKernels = map[string]cuda.SimKernel{
	"fill": func(c *cuda.KernelCall) error {
		n := int(c.Int32(2))
		p, base := cuda.SimSlice[int32](c, 0, n), c.Int32(1)
		for i := range p {
			p[i] = base + int32(i)
		}
		return nil
	},
	"add": func(c *cuda.KernelCall) error {
		n := int(c.Int32(3))
		out, a, b := cuda.SimSlice[int32](c, 0, n), cuda.SimSlice[int32](c, 1, n), cuda.SimSlice[int32](c, 2, n)
		for i := range out {
			out[i] = a[i] + b[i]
		}
		return nil
	},
}

const threads = 256

type config struct {
	n        int
	launches int
	sample.Flags
}

func main() {
	var c config
	flag.IntVar(&c.n, "n", 1<<24, "ints in each array")
	flag.IntVar(&c.launches, "launches", 100, "launches of each graph")
	c.Register()
	flag.Parse()
	sample.Finish(run(c))
}

type env struct {
	ctx       context.Context
	dev       *device.Device
	s         *streams.Stream
	fill, add *device.Kernel
	out       *device.Buffer
	n         int
}

func (e *env) cfg() cuda.LaunchConfig {
	return cuda.LaunchConfig{Grid: cuda.Dim(uint32((e.n + threads - 1) / threads)), Block: cuda.Dim(threads)}
}

// check verifies out[i] = (base+1+i) + (base+2+i) for the base a launch used.
func (e *env) check(what string, base int32) error {
	got := make([]int32, e.n)
	if err := streams.CopyFromDevice(e.ctx, e.s, got, e.out).Wait(e.ctx); err != nil {
		return err
	}
	for i, v := range got {
		if want := 2*base + 3 + 2*int32(i); v != want {
			return fmt.Errorf("%s: element %d is %d, want %d", what, i, v, want)
		}
	}
	return nil
}

func run(c config) (err error) {
	if c.n <= 0 || c.n > 1<<28 || c.launches <= 0 {
		return fmt.Errorf("-n must be in [1, 2^28] and -launches positive")
	}
	ctx := context.Background()
	dev, err := device.Open(ctx, c.Ordinal, c.Options()...)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, dev.Close)
	sample.Describe(dev)
	mod, err := dev.Compile(ctx, device.Source{Name: "graphmemorynodes.cu", Code: source, Sim: simKernels})
	if err != nil {
		return err
	}
	e := &env{ctx: ctx, dev: dev, n: c.n}
	if e.fill, err = mod.Kernel(ctx, "fill"); err != nil {
		return err
	}
	if e.add, err = mod.Kernel(ctx, "add"); err != nil {
		return err
	}
	if e.out, err = dev.Malloc(ctx, uint64(4*c.n)); err != nil {
		return err
	}
	if e.s, err = streams.New(ctx, dev); err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return e.s.Close(ctx) })
	free0, total, err := dev.MemInfo(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("%d ints per array, %d launches; free memory %d MiB of %d MiB\n", c.n, c.launches, free0>>20, total>>20)

	if err := oneGraph(e, c.launches); err != nil {
		return fmt.Errorf("alloc and free in one graph: %w", err)
	}
	if err := twoGraphs(e, c.launches); err != nil {
		return fmt.Errorf("alloc in one graph, free in another: %w", err)
	}
	if err := unfreed(e); err != nil {
		return fmt.Errorf("an unfreed allocation: %w", err)
	}
	free1, _, err := dev.MemInfo(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("free memory afterwards %d MiB (graph memory stays reserved for reuse until trimmed)\n", free1>>20)
	return nil
}

// allocFill adds two allocations and kernels filling them with base+1+i and base+2+i.
func allocFill(e *env, g *graphs.Graph, base int32) (a, b cuda.DevicePtr, filled []*graphs.Node, err error) {
	size := uint64(4 * e.n)
	for i, p := range []*cuda.DevicePtr{&a, &b} {
		alloc, ptr, err := g.AddAlloc(e.ctx, nil, size)
		if err != nil {
			return 0, 0, nil, err
		}
		*p = ptr
		k, err := g.AddKernel(e.ctx, graphs.After(alloc), e.fill, e.cfg(), ptr, base+int32(i)+1, int32(e.n))
		if err != nil {
			return 0, 0, nil, err
		}
		filled = append(filled, k)
	}
	return a, b, filled, nil
}

// addFree adds out = a + b after deps, then frees a and b.
func addFree(e *env, g *graphs.Graph, deps graphs.Deps, a, b cuda.DevicePtr) error {
	sum, err := g.AddKernel(e.ctx, deps, e.add, e.cfg(), e.out, a, b, int32(e.n))
	if err != nil {
		return err
	}
	for _, p := range []cuda.DevicePtr{a, b} {
		if _, err := g.AddFree(e.ctx, graphs.After(sum), p); err != nil {
			return err
		}
	}
	return nil
}

func oneGraph(e *env, launches int) error {
	g, err := graphs.New(e.ctx, e.dev)
	if err != nil {
		return err
	}
	defer g.Close(e.ctx)
	a, b, filled, err := allocFill(e, g, 0)
	if err != nil {
		return err
	}
	if err := addFree(e, g, graphs.After(filled...), a, b); err != nil {
		return err
	}
	x, err := g.Instantiate(e.ctx)
	if err != nil {
		return err
	}
	defer x.Close(e.ctx)
	for i := range launches {
		base := int32(i)
		// Each launch with its own numbers: the fill kernels' arguments change.
		if err := x.SetKernelArgs(e.ctx, filled[0], a, base+1, int32(e.n)); err != nil {
			return err
		}
		if err := x.SetKernelArgs(e.ctx, filled[1], b, base+2, int32(e.n)); err != nil {
			return err
		}
		if err := x.Launch(e.ctx, e.s).Wait(e.ctx); err != nil {
			return fmt.Errorf("launch %d: %w", i, err)
		}
		if i == 0 || i == launches-1 {
			if err := e.check(fmt.Sprintf("launch %d", i), base); err != nil {
				return err
			}
		}
	}
	fmt.Printf("one graph: %d launches, allocations at %#x and %#x every time\n", launches, uintptr(a), uintptr(b))
	return nil
}

func twoGraphs(e *env, launches int) error {
	ga, err := graphs.New(e.ctx, e.dev)
	if err != nil {
		return err
	}
	defer ga.Close(e.ctx)
	gb, err := graphs.New(e.ctx, e.dev)
	if err != nil {
		return err
	}
	defer gb.Close(e.ctx)
	a, b, _, err := allocFill(e, ga, 10)
	if err != nil {
		return err
	}
	if err := addFree(e, gb, nil, a, b); err != nil {
		return err
	}
	xa, err := ga.Instantiate(e.ctx)
	if err != nil {
		return err
	}
	defer xa.Close(e.ctx)
	xb, err := gb.Instantiate(e.ctx)
	if err != nil {
		return err
	}
	defer xb.Close(e.ctx)
	for i := range launches {
		xa.Launch(e.ctx, e.s) // the stream orders the two graphs
		if err := xb.Launch(e.ctx, e.s).Wait(e.ctx); err != nil {
			return fmt.Errorf("launch %d: %w", i, err)
		}
	}
	if err := e.check("two graphs", 10); err != nil {
		return err
	}
	fmt.Printf("two graphs: %d launch pairs\n", launches)
	return nil
}

func unfreed(e *env) error {
	g, err := graphs.New(e.ctx, e.dev)
	if err != nil {
		return err
	}
	defer g.Close(e.ctx)
	a, b, filled, err := allocFill(e, g, 20)
	if err != nil {
		return err
	}
	if _, err := g.AddKernel(e.ctx, graphs.After(filled...), e.add, e.cfg(), e.out, a, b, int32(e.n)); err != nil {
		return err
	}
	x, err := g.Instantiate(e.ctx)
	if err != nil {
		return err
	}
	if err := x.Launch(e.ctx, e.s).Wait(e.ctx); err != nil {
		return err
	}
	err = x.Launch(e.ctx, e.s).Wait(e.ctx)
	if err == nil {
		return errors.New("relaunching with the first launch's memory unfreed was accepted")
	}
	fmt.Printf("relaunch without freeing refused: %v\n", err)
	// Any graph may free it; then the first one launches again.
	freer, err := graphs.New(e.ctx, e.dev)
	if err != nil {
		return err
	}
	defer freer.Close(e.ctx)
	for _, p := range []cuda.DevicePtr{a, b} {
		if _, err := freer.AddFree(e.ctx, nil, p); err != nil {
			return err
		}
	}
	fx, err := freer.Instantiate(e.ctx)
	if err != nil {
		return err
	}
	defer fx.Close(e.ctx)
	for range 2 {
		fx.Launch(e.ctx, e.s)
		if err := x.Launch(e.ctx, e.s).Wait(e.ctx); err != nil {
			return fmt.Errorf("relaunch after a free: %w", err)
		}
	}
	if err := fx.Launch(e.ctx, e.s).Wait(e.ctx); err != nil {
		return err
	}
	fmt.Println("freed by another graph, relaunched")
	if err := x.Close(e.ctx); err != nil {
		return err
	}
	// AutoFreeOnLaunch: a graph of its own, whose launches free the previous launch's memory.
	g2, err := graphs.New(e.ctx, e.dev)
	if err != nil {
		return err
	}
	defer g2.Close(e.ctx)
	a2, b2, filled2, err := allocFill(e, g2, 20)
	if err != nil {
		return err
	}
	if _, err := g2.AddKernel(e.ctx, graphs.After(filled2...), e.add, e.cfg(), e.out, a2, b2, int32(e.n)); err != nil {
		return err
	}
	auto, err := g2.Instantiate(e.ctx, graphs.AutoFreeOnLaunch())
	if err != nil {
		return err
	}
	defer auto.Close(e.ctx)
	for range 3 {
		if err := auto.Launch(e.ctx, e.s).Wait(e.ctx); err != nil {
			return fmt.Errorf("with AutoFreeOnLaunch: %w", err)
		}
	}
	fmt.Println("AutoFreeOnLaunch relaunches")
	return e.check("unfreed", 20)
}
