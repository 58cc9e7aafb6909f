// Command simplecudagraphs is NVIDIA's simpleCudaGraphs sample done the gpuactor way: it sums
// an array of floats on the GPU with a two-kernel reduction, as a CUDA graph built twice —
// once node by node with the builder, once by capturing the same work queued on two streams
// that fork and join through events — clones the captured graph, launches each a few times
// and checks every result against the sum computed on the CPU. It prints PASS or FAIL.
//
//	go run ./examples/simplecudagraphs -n 16777216
//	go run ./examples/simplecudagraphs -backend sim -n 100000
//
// The builder's graph uploads its input through staging memory the graph owns and downloads
// the result the same way; the captured graph copies from and to pinned host buffers. A host
// node reads the result at the end of every launch, as the sample's callback does.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/streams"
)

// source is the sample's reduction: every block sums a grid-strided share of the input into
// one partial sum, then one block sums the partial sums. Sums are doubles, so the order of
// the additions hardly matters.
const source = `
#define THREADS 512
extern "C" __global__ void reduce(const float* in, double* partial, int n) {
    __shared__ double tmp[THREADS];
    double s = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += in[i];
    tmp[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) tmp[threadIdx.x] += tmp[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = tmp[0];
}
extern "C" __global__ void reduce_final(const double* partial, double* out, int nblocks) {
    __shared__ double tmp[THREADS];
    double s = 0;
    for (int i = threadIdx.x; i < nblocks; i += blockDim.x) s += partial[i];
    tmp[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) tmp[threadIdx.x] += tmp[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = tmp[0];
}
`

// simKernels are the two kernels for the simulator.
var simKernels = map[string]cuda.SimKernel{
	"reduce": func(c *cuda.KernelCall) error {
		n := int(c.Int32(2))
		in := cuda.SimSlice[float32](c, 0, n)
		blocks := int(c.Grid.X)
		partial := cuda.SimSlice[float64](c, 1, blocks)
		stride := blocks * int(c.Block.X)
		for b := range blocks {
			s := 0.0
			for t := range int(c.Block.X) {
				for i := b*int(c.Block.X) + t; i < n; i += stride {
					s += float64(in[i])
				}
			}
			partial[b] = s
		}
		return nil
	},
	"reduce_final": func(c *cuda.KernelCall) error {
		n := int(c.Int32(2))
		partial := cuda.SimSlice[float64](c, 0, n)
		s := 0.0
		for _, v := range partial {
			s += v
		}
		cuda.SimSlice[float64](c, 1, 1)[0] = s
		return nil
	},
}

const (
	threads  = 512 // block size of both kernels (THREADS)
	blocks   = 64  // blocks of the first kernel: its partial sums
	launches = 3   // launches of each graph, as in the sample
)

// nan is what a check leaves behind, so that a launch whose host node did not run fails.
var nan = math.Float64bits(math.NaN())

type config struct {
	n int
	sample.Flags
}

func main() {
	var c config
	flag.IntVar(&c.n, "n", 1<<24, "floats to sum")
	c.Register()
	flag.Parse()
	sample.Finish(run(c))
}

// pipeline is what both graphs hold.
type pipeline struct {
	reduce, final *device.Kernel
	in            *device.Buffer // n floats
	partial       *device.Buffer // blocks doubles
	result        *device.Buffer // one double
	n             int
}

func (p *pipeline) reduceCfg() cuda.LaunchConfig {
	return cuda.LaunchConfig{Grid: cuda.Dim(blocks), Block: cuda.Dim(threads)}
}

func (p *pipeline) finalCfg() cuda.LaunchConfig {
	return cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(threads)}
}

func run(c config) (err error) {
	if c.n <= 0 || c.n > 1<<30 {
		return fmt.Errorf("-n must be in [1, 2^30]")
	}
	ctx := context.Background()
	dev, err := device.Open(ctx, c.Ordinal, c.Options()...)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, dev.Close)
	sample.Describe(dev)
	fmt.Printf("%d floats, %d blocks of %d threads\n", c.n, blocks, threads)

	mod, err := dev.Compile(ctx, device.Source{Name: "simplecudagraphs.cu", Code: source, Sim: simKernels})
	if err != nil {
		return err
	}
	p := &pipeline{n: c.n}
	if p.reduce, err = mod.Kernel(ctx, "reduce"); err != nil {
		return err
	}
	if p.final, err = mod.Kernel(ctx, "reduce_final"); err != nil {
		return err
	}
	for _, b := range []struct {
		dst  **device.Buffer
		size uint64
	}{{&p.in, uint64(4 * c.n)}, {&p.partial, 8 * blocks}, {&p.result, 8}} {
		if *b.dst, err = dev.Malloc(ctx, b.size); err != nil {
			return err
		}
	}

	input := make([]float32, c.n)
	rng := rand.New(rand.NewPCG(1, 2))
	want := 0.0
	for i := range input {
		input[i] = rng.Float32()
		want += float64(input[i])
	}
	fmt.Printf("CPU sum %.6f\n", want)

	explicit, check, err := buildExplicit(ctx, dev, p, input)
	if err != nil {
		return fmt.Errorf("building the graph: %w", err)
	}
	s1, err := streams.New(ctx, dev)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return s1.Close(ctx) })
	captured, capCheck, err := buildCaptured(ctx, dev, p, input, s1)
	if err != nil {
		return fmt.Errorf("capturing the graph: %w", err)
	}
	clone, err := captured.Clone(ctx)
	if err != nil {
		return err
	}
	for _, v := range []struct {
		name  string
		g     *graphs.Graph
		check func() float64
	}{{"explicit", explicit, check}, {"captured", captured, capCheck}, {"cloned", clone, capCheck}} {
		d, err := v.g.Describe(ctx)
		if err != nil {
			return err
		}
		fmt.Printf("%s graph: %d nodes (%d kernels)\n", v.name, len(d.Nodes), d.Count(graphs.KernelNode))
		x, err := v.g.Instantiate(ctx)
		if err != nil {
			return err
		}
		for i := range launches {
			if err := x.Launch(ctx, s1).Wait(ctx); err != nil {
				return fmt.Errorf("%s graph, launch %d: %w", v.name, i, err)
			}
			got := v.check()
			fmt.Printf("  launch %d: GPU sum %.6f\n", i, got)
			if math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
				return fmt.Errorf("%s graph, launch %d: sum %.6f, want %.6f", v.name, i, got, want)
			}
		}
		if err := x.Close(ctx); err != nil {
			return err
		}
	}
	for _, g := range []*graphs.Graph{explicit, captured, clone} {
		if err := g.Close(ctx); err != nil {
			return err
		}
	}
	return nil
}

// buildExplicit builds upload → (memset partial) → reduce → (memset result) → final →
// download → host node, node by node. check returns what the host node saw last.
func buildExplicit(ctx context.Context, dev *device.Device, p *pipeline, input []float32) (*graphs.Graph, func() float64, error) {
	g, err := graphs.New(ctx, dev)
	if err != nil {
		return nil, nil, err
	}
	up, _, err := graphs.AddUpload(ctx, g, nil, p.in, input)
	if err != nil {
		return nil, nil, err
	}
	clearPartial, err := g.AddMemset(ctx, nil, p.partial, 0)
	if err != nil {
		return nil, nil, err
	}
	red, err := g.AddKernel(ctx, graphs.After(up, clearPartial), p.reduce, p.reduceCfg(), p.in, p.partial, int32(p.n))
	if err != nil {
		return nil, nil, err
	}
	clearResult, err := g.AddMemset(ctx, nil, p.result, 0)
	if err != nil {
		return nil, nil, err
	}
	fin, err := g.AddKernel(ctx, graphs.After(red, clearResult), p.final, p.finalCfg(), p.partial, p.result, int32(blocks))
	if err != nil {
		return nil, nil, err
	}
	down, out, err := graphs.AddDownload[float64](ctx, g, graphs.After(fin), p.result)
	if err != nil {
		return nil, nil, err
	}
	var seen atomic.Uint64
	seen.Store(nan)
	if _, err := g.AddHost(ctx, graphs.After(down), func() { seen.Store(math.Float64bits(out.Slice()[0])) }); err != nil {
		return nil, nil, err
	}
	return g, func() float64 { return math.Float64frombits(seen.Swap(nan)) }, nil
}

// buildCaptured queues the same work on s1 and a second stream that forks from it and joins
// back, and captures it.
func buildCaptured(ctx context.Context, dev *device.Device, p *pipeline, input []float32, s1 *streams.Stream) (*graphs.Graph, func() float64, error) {
	s2, err := streams.New(ctx, dev)
	if err != nil {
		return nil, nil, err
	}
	defer s2.Close(ctx)
	fork, err := streams.NewEvent(ctx, dev, streams.DisableTiming)
	if err != nil {
		return nil, nil, err
	}
	defer fork.Close(ctx)
	join, err := streams.NewEvent(ctx, dev, streams.DisableTiming)
	if err != nil {
		return nil, nil, err
	}
	defer join.Close(ctx)
	// Pinned buffers the graph copies from and to at every launch; freed with the device.
	hin, err := dev.MallocHost(ctx, uint64(4*len(input)))
	if err != nil {
		return nil, nil, err
	}
	copy(device.HostSlice[float32](hin), input)
	hout, err := dev.MallocHost(ctx, 8)
	if err != nil {
		return nil, nil, err
	}
	var seen atomic.Uint64
	seen.Store(nan)
	g, err := graphs.Capture(ctx, s1, func(ctx context.Context) error {
		s1.Record(ctx, fork)
		s2.Wait(ctx, fork)
		s1.CopyHostToDevice(ctx, p.in, hin)
		s2.Memset(ctx, p.partial, 0)
		s2.Record(ctx, join)
		s1.Wait(ctx, join)
		s1.Launch(ctx, p.reduce, p.reduceCfg(), p.in, p.partial, int32(p.n))
		s1.Memset(ctx, p.result, 0)
		s1.Launch(ctx, p.final, p.finalCfg(), p.partial, p.result, int32(blocks))
		s1.CopyDeviceToHost(ctx, hout, p.result)
		_, err := s1.HostFunc(ctx, func() { seen.Store(math.Float64bits(device.HostSlice[float64](hout)[0])) }).Await(ctx)
		return err
	})
	return g, func() float64 { return math.Float64frombits(seen.Swap(nan)) }, err
}
